"""Table 6: every mode of the decay control scored by rec-sel and spd-sel; midpoint counts."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.paper import table_files  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402
from gaugelab.sensing import controls  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

p = snakemake.params
runs, grids = table_files.schedule_runs(snakemake.input.runs, snakemake.config)  # each mode's, found by run
table, counts, tex, html = table_files.table6(runs, grids, p.tol, p.rmsprop_budget)
records.write_table(table, snakemake.output.csv)
records.write_table(counts, snakemake.output.counts)
records.write_table(controls.deltas(table), snakemake.output.deltas)
sealed.write(snakemake.output.tex, tex)
sealed.write(snakemake.output.html, html)
print(table[table["selected"]].to_string(), counts.to_string(), sep="\n")
