"""One drift figure (three twins, log-log) per diagnosis, drawn from the diagnosis files only."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.paper import figures, figures_twins  # noqa: E402
from gaugelab.core import sealed  # noqa: E402
from gaugelab.tools import diagnose  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

outputs = {Path(p).name: p for p in snakemake.output}
for path in snakemake.input.runs:
    for testbed, report in diagnose.read_bundle(path)["reports"].items():
        stem = f"{Path(path).stem}.{testbed}"
        figures.save(figures_twins.diagnosis_figure(report), outputs[f"{stem}.pdf"], outputs[f"{stem}.png"])
