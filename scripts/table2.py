"""Table 2 as LaTeX and HTML, near-tie selections marked."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab import table_files  # noqa: E402

tex, html = table_files.table2(snakemake.input.summary, snakemake.input.comparison)
Path(snakemake.output.tex).write_text(tex)
Path(snakemake.output.html).write_text(html)
