"""The dial table as LaTeX and HTML."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w")

import pandas as pd  # noqa: E402

from gaugelab import tables  # noqa: E402

envelope = pd.read_csv(snakemake.input.envelope)
verdicts = pd.read_csv(snakemake.input.fixed_lr)
Path(snakemake.output.tex).write_text(tables.dial_latex(envelope, verdicts))
Path(snakemake.output.html).write_text(tables.dial_html(envelope, verdicts))
