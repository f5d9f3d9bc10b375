"""Table 3 (drift between twins) and its QK-drift companion, as LaTeX and HTML."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job


from gaugelab import records, tables  # noqa: E402

summary = records.read_table(snakemake.input[0], keep_default_na=False, na_values=[""])
out = snakemake.output
Path(out.tex).write_text(tables.table3_latex(summary, "drift"))
Path(out.html).write_text(tables.table3_html(summary, "drift"))
Path(out.qk_tex).write_text(tables.table3_latex(summary, "qk_mean"))
Path(out.qk_html).write_text(tables.table3_html(summary, "qk_mean"))
