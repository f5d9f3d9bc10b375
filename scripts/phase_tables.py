"""Section 8: every arm's S5-selected rows, the coarse grid per tau with its verdict and the
crossing tau*, and the schedule control (sensing.md §13.1-13.2), as CSV, LaTeX and HTML."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.paper import table_files  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402
from gaugelab.sensing import phase  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

summaries = {(mode, float(tau)): records.read_table(path)
             for (mode, tau), path in zip(snakemake.params.arms, snakemake.input.summaries)}
selected = phase.selected(summaries)
grid, schedule, files = table_files.phase(selected)
records.write_table(selected, snakemake.output.selected)
records.write_table(grid, snakemake.output.phase)
records.write_table(schedule, snakemake.output.schedule)
for key, text in files.items():
    sealed.write(snakemake.output[key], text)
print(grid.to_string())
print(schedule.to_string())
