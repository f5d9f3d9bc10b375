"""EXTENSION (not in the paper): the merged-model table, as CSV, LaTeX and HTML."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

import pandas as pd  # noqa: E402

from gaugelab.paper import merge_table  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

rows = [records.load(p, records.MERGE_SCHEMA) for p in snakemake.input.runs]
flat = pd.DataFrame([{k: v for k, v in r.items() if not isinstance(v, (dict, list)) and k not in ("schema", "digest")}
                     for r in rows])
records.write_table(flat, snakemake.output.csv)
sealed.write(snakemake.output.tex, merge_table.latex(rows))
sealed.write(snakemake.output.html, merge_table.html(rows))
print(flat.to_string())
