"""EXTENSION (not in the paper): the merged-model table, as CSV, LaTeX and HTML."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w")

import pandas as pd  # noqa: E402

from gaugelab import merge  # noqa: E402

rows = [json.loads(Path(p).read_text()) for p in snakemake.input]
flat = pd.DataFrame([{k: v for k, v in r.items() if not isinstance(v, (dict, list))} for r in rows])
flat.to_csv(snakemake.output.csv, index=False)
Path(snakemake.output.tex).write_text(merge.latex(rows))
Path(snakemake.output.html).write_text(merge.html(rows))
print(flat.to_string())
