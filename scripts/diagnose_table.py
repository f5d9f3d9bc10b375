"""The table "which optimizers respect the gauge" (CSV, LaTeX, HTML), from the diagnosis files only."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w")

import pandas as pd  # noqa: E402

from gaugelab import diagnose  # noqa: E402

rows = diagnose.summary_rows([diagnose.read_bundle(path) for path in snakemake.input])
pd.DataFrame(rows).to_csv(snakemake.output.summary, index=False, float_format="%.6g")
Path(snakemake.output.tex).write_text(diagnose.table_latex(rows))
Path(snakemake.output.html).write_text(diagnose.table_html(rows))
