"""The table "which optimizers respect the gauge" (CSV, LaTeX, HTML), from the diagnosis files only."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

import pandas as pd  # noqa: E402

from gaugelab.paper import tables  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402
from gaugelab.tools import diagnose  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

rows = diagnose.summary_rows([diagnose.read_bundle(path) for path in snakemake.input.runs])
records.write_table(pd.DataFrame(rows), snakemake.output.summary, float_format="%.6g")
sealed.write(snakemake.output.tex, tables.diagnosis_latex(rows))
sealed.write(snakemake.output.html, tables.diagnosis_html(rows, diagnose.caption(rows)))
