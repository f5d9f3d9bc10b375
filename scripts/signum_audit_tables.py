"""App. D.10 P2 and P3: signum's mean rec (and each seed's) per horizon, anneal, tail amplitude and
lr, every run checked to have executed all T steps; as CSV, LaTeX and HTML."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.paper import table_files  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402
from gaugelab.sensing import select, signum_audit  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

p = snakemake.params
summaries = {arm: records.read_table(path) for arm, path in zip(p.arms, snakemake.input.summaries)}
runs = {arm: select.frame([records.read(path) for path in paths]) for arm, paths in p.runs.items()}
table = signum_audit.horizon(summaries, runs, p.config)
records.write_table(table, snakemake.output.csv)
tex, html = table_files.signum_audit(table)
sealed.write(snakemake.output.tex, tex)
sealed.write(snakemake.output.html, html)
print(table.to_string())
