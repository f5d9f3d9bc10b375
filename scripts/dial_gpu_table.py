"""App. D.9's optional GPU dial arm from its variants' bundles: per (size, p) lr* by S5 over every
seed, rec, erank and steps (sensing.dial_gpu, sensing.md §14.6) as CSV, LaTeX and HTML."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.paper import table_files  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402
from gaugelab.sensing import dial_gpu  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

p = snakemake.params
runs = {tuple(key): records.read_bundle(path) for key, path in zip(p.stages, snakemake.input.bundles)}
table = dial_gpu.table(p.arms, runs)
records.write_table(table, snakemake.output.table)
# rendered from the CSV as written, the one path `gaugelab table dial_gpu` takes too
tex, html = table_files.COMMANDS["dial_gpu"].render([snakemake.output.table], {})
sealed.write(snakemake.output.tex, tex)
sealed.write(snakemake.output.html, html)
print(table.to_string())
