"""App. D.9's Table 11 from every stage bundle of the ladder: its cells and each arm's split check
(sensing.ladder, sensing.md §14.4) as CSV, LaTeX and HTML."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.paper import table_files  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402
from gaugelab.sensing import ladder  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

p = snakemake.params
runs = {tuple(key): records.read_bundle(path) for key, path in zip(p.stages, snakemake.input.bundles)}
table, splits = ladder.table11(ladder.cells(p.arms, runs))
records.write_table(table, snakemake.output.table)
records.write_table(splits, snakemake.output.splits)
# rendered from the CSVs as written, the one path `gaugelab table table11` takes too
tex, html = table_files.COMMANDS["table11"].render([snakemake.output.table, snakemake.output.splits], {})
sealed.write(snakemake.output.tex, tex)
sealed.write(snakemake.output.html, html)
print(table.to_string())
print(splits.to_string())
