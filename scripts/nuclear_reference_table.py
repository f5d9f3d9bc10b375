"""The convex reference row per seed and its mean, as CSV, LaTeX and HTML."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab import controls, nuclear, records, tables  # noqa: E402

summary = controls.nuclear_summary([nuclear.read(path) for path in snakemake.input.runs])
records.write_table(summary, snakemake.output.csv)
columns = [("seed", "text", 0), ("rec", "num", 4), ("erank", "num", 2), ("nuc", "num", 3), ("nuc_truth", "num", 3),
           ("feasibility", "sci", 0), ("iterations", "int", 0), ("primal_residual", "sci", 0)]
header = ["seed", "rec", "erank", "nuclear norm", "of X*", "feasibility", "iterations", "primal residual"]
tex, html = tables.simple_table(summary, columns, header, "Table 2 min-nuclear-norm reference row")
Path(snakemake.output.tex).write_text(tex)
Path(snakemake.output.html).write_text(html)
print(summary.to_string())
