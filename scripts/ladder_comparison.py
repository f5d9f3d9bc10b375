"""App. D.9's Table 11 beside the paper: its qualitative statements (sensing.md §14.5, §16) as
yes/no checks on the reproduced table."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.paper import compare, opt_in_quantities, published  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

table, splits = records.read_table(snakemake.input.table), records.read_table(snakemake.input.splits)
rows = compare.rows(published.LADDER, opt_in_quantities.ladder(table, splits))
records.write_table(rows, snakemake.output[0])
print(rows.to_string())
