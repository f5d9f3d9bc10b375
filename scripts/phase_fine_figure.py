"""The paper's phase figure (sensing.md §15.4) from the GPU fine grid: rec at lr* ± one population
sd against tau at the configured size and tails, the crossing tau* of the whole grid, the paper's."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.paper import figures, published  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402
from gaugelab.optim import cards  # noqa: E402
from gaugelab.sensing import phase, phase_fine  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

figure = snakemake.params.figure
mode = phase_fine.mode(figure["size"])
selected = records.read_table(snakemake.input.selected)
tau_star = phase.tau_star(selected, (mode, cards.MUON), (mode, cards.GD))
drawn = selected[(selected["mode"] == mode) & selected["tau"].isin([float(t) for t in figure["taus"]])]
paper = published.lookup("Section 8", "tau* (fine GPU grid, 10 seeds, n = 40)", "tau_star").value
title = f"GPU fine grid, {figure['size']}, {snakemake.params.seeds} seeds"
fig = figures.figure_phase(drawn, tau_star, published_tau=paper, title=title)
figures.save(fig, snakemake.output.pdf, snakemake.output.png)
print(f"tau* = {tau_star}")
