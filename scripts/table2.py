"""Table 2 as LaTeX and HTML, near-tie selections marked."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job


from gaugelab import records, tables  # noqa: E402

summary = records.read_table(snakemake.input.summary)
comparison = records.read_table(snakemake.input.comparison, keep_default_na=False, na_values=[""])
near_ties = set(comparison[comparison["note"].fillna("").str.startswith("near-tie")]["row"])
Path(snakemake.output.tex).write_text(tables.table2_latex(summary, near_ties))
Path(snakemake.output.html).write_text(tables.table2_html(summary, near_ties))
