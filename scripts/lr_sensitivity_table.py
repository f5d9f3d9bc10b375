"""App. D.2: every (method, lr) cell, the flow-limit row flagged."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.paper import table_files  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

p = snakemake.params
rows, tex, html = table_files.lr_sensitivity(records.read_table(snakemake.input[0]), p.grids, p.tol)
records.write_table(rows, snakemake.output.csv)
sealed.write(snakemake.output.tex, tex)
sealed.write(snakemake.output.html, html)
print(rows.to_string())
