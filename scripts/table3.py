"""Table 3 (drift between twins) and its QK-drift companion, as LaTeX and HTML."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.paper import table_files  # noqa: E402
from gaugelab.core import sealed  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

out = snakemake.output
for metric, tex_path, html_path in (("drift", out.tex, out.html), ("qk_mean", out.qk_tex, out.qk_html)):
    tex, html = table_files.table3(snakemake.input[0], metric)
    sealed.write(tex_path, tex)
    sealed.write(html_path, html)
