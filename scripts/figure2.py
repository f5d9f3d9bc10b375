"""Figure 2: drift between twins against the training step, from the S6 records' summary rows,
the D.5 pairs' range behind each gauge twin and the paper's Table 3 values as markers."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job


from gaugelab.paper import figures, figures_twins, published  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402
from gaugelab.paper import twin_summary as ts  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

summary = records.read_table(snakemake.input[0], keep_default_na=False, na_values=[""])
curves = ts.figure2_curves(summary)
paper = figures_twins.figure2_published(published.SECTION6 + published.TRAJECTORY, published.SECTION6_STEPS)
fig = figures_twins.figure2(curves, paper, spread=ts.figure2_spread(summary))
figures.save(fig, snakemake.output.pdf, snakemake.output.png)
