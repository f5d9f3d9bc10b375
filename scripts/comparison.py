"""Merge the per-family comparison parts into one row per published value (compare.complete);
render it as HTML (grouped by paper section) and as LaTeX macros."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

import pandas as pd  # noqa: E402

from gaugelab.paper import compare  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402
from gaugelab.paper import pages  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

TEXT = {c: str for c in ("published", "at", "tolerance", "where", "why", "note")}
parts = pd.concat([records.read_table(path, keep_default_na=False, na_values=[""], dtype=TEXT)
                   for path in snakemake.input.parts], ignore_index=True)
comparison = compare.complete(parts.fillna({c: "" for c in TEXT}))
records.write_table(comparison, snakemake.output.csv)
numerics = records.read_table(snakemake.input.numerics)
sealed.write(snakemake.output.html, pages.comparison_html(comparison, numerics))
sealed.write(snakemake.output.macros, pages.macros(comparison))
print(compare.counts(comparison).to_string())
