"""The convex reference row per seed and its mean, as CSV, LaTeX and HTML."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.paper import table_files  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

runs = [records.load(path, records.CONVEX_SCHEMA) for path in snakemake.input.runs]
summary, tex, html = table_files.nuclear_reference(runs)
records.write_table(summary, snakemake.output.csv)
sealed.write(snakemake.output.tex, tex)
sealed.write(snakemake.output.html, html)
print(summary.to_string())
