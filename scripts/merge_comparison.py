"""Merge the per-experiment comparison parts; render them as HTML and LaTeX macros."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

import pandas as pd  # noqa: E402

from gaugelab import compare, records, tables  # noqa: E402

comparison = pd.concat([records.read_table(path, keep_default_na=False, na_values=[""], dtype={"published": str, "at": str})
                         for path in snakemake.input.parts],
                       ignore_index=True)
comparison["note"] = comparison["note"].fillna("")
records.write_table(comparison, snakemake.output.csv)
numerics = records.read_table(snakemake.input.numerics)
Path(snakemake.output.html).write_text(tables.comparison_html(comparison, numerics))
Path(snakemake.output.macros).write_text(compare.macros(comparison))
print(comparison["verdict"].value_counts().to_string())
