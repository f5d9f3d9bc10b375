"""Which machines and which numerics mode made the records behind the comparison: one row per
family; records of different modes are refused (records.one_numerics)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.core import records, sealed  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

table = records.numerics_table(snakemake.input.records)
records.write_table(table, snakemake.output[0])
print(table.to_string())
