"""App. D.4: the selected row per (init, method) and the split check per init."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.paper import table_files  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

p = snakemake.params
summaries = {scale: records.read_table(path) for scale, path in zip(p.inits, snakemake.input.summaries)}
zoo = records.read_table(snakemake.input.zoo_summary)
rows, checks, tex, html = table_files.init_scale(summaries, zoo, p.zoo_init, p.tol)
records.write_table(rows, snakemake.output.csv)
records.write_table(checks, snakemake.output.checks)
sealed.write(snakemake.output.tex, tex)
sealed.write(snakemake.output.html, html)
print(rows.to_string(), checks.to_string(), sep="\n")
