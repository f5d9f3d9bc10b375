"""The phase diagram's GPU fine grid (sensing.md §13.3) from its bundles: S5 per (tau, method)
over all the seeds of the cell, the selected rows, and the table with every crossing."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.paper import table_files  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402
from gaugelab.sensing import phase_fine  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

p = snakemake.params
runs = {arm: [] for arm in p.arms}
for (arm, _method, _stage), path in zip(p.stages, snakemake.input.bundles):
    runs[arm] += records.read_bundle(path)
selected = phase_fine.selected(p.arms, runs)
records.write_table(selected, snakemake.output.selected)
grid, tex, html = table_files.phase_fine(records.read_table(snakemake.output.selected))  # as written
sealed.write(snakemake.output.tex, tex)
sealed.write(snakemake.output.html, html)
print(grid.to_string())
