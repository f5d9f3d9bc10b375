"""Section 8's phase figure (sensing.md §15.4) from the coarse grid's selected rows: rec at lr*
± one population sd against tau, the computed crossing tau*, the paper's tau* as a marker."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.paper import figures, published  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402
from gaugelab.sensing import phase  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

selected = records.read_table(snakemake.input.selected)
coarse = selected[selected["mode"] == phase.COARSE]
tau_star = phase.tau_star(selected)
paper = published.lookup("Section 8", "tau* (coarse CPU grid, 3 seeds)", "tau_star").value
seeds = len(snakemake.config["seeds"])
fig = figures.figure_phase(coarse, tau_star, published_tau=paper, title=f"CPU coarse grid, {seeds} seeds")
figures.save(fig, snakemake.output.pdf, snakemake.output.png)
print(f"tau* = {tau_star}")
