"""App. D.10 P1: signum's mechanism diagnostics (sensing.md §12), as CSV, LaTeX and HTML."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.paper import table_files  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402
from gaugelab.sensing import signum_diagnostics  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

p = snakemake.params
rows, _ = signum_diagnostics.run_diagnostics(p.config, p.dtype, p.device)
records.write_table(rows, snakemake.output.csv)
tex, html = table_files.signum_diagnostics(rows)
sealed.write(snakemake.output.tex, tex)
sealed.write(snakemake.output.html, html)
print(rows.to_string())
