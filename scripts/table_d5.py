"""The Appendix D.5 summary as LaTeX and HTML."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job


from gaugelab import records, tables  # noqa: E402

d5 = records.read_table(snakemake.input[0], keep_default_na=False, na_values=[""])
d5["note"] = d5["note"].fillna("")
Path(snakemake.output.tex).write_text(tables.d5_latex(d5))
Path(snakemake.output.html).write_text(tables.d5_html(d5))
