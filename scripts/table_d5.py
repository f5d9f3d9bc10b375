"""The Appendix D.5 summary as LaTeX and HTML."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.paper import table_files  # noqa: E402
from gaugelab.core import sealed  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

tex, html = table_files.d5(snakemake.input[0])
sealed.write(snakemake.output.tex, tex)
sealed.write(snakemake.output.html, html)
