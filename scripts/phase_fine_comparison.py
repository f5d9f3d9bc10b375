"""The fine grid's crossing tau* beside the paper's (sensing.md §13.3, §16)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.paper import compare, opt_in_quantities, published  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

selected = records.read_table(snakemake.input.selected)
rows = compare.rows(published.SECTION8, opt_in_quantities.phase_fine(selected, snakemake.params.size))
records.write_table(rows, snakemake.output[0])
print(rows.to_string())
