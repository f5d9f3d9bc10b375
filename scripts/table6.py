"""Table 6: every mode of the decay control scored by rec-sel and spd-sel; midpoint counts."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab import controls, records, select, table_files  # noqa: E402

p = snakemake.params
recs, runs = iter(records.read(path) for path in snakemake.input.runs), {}
for mode, count in p.counts.items():  # the inputs are each mode's runs in turn
    runs[mode] = select.frame([next(recs) for _ in range(count)])
table, counts, tex, html = table_files.table6(runs, p.grids, p.tol, p.rmsprop_budget)
records.write_table(table, snakemake.output.csv)
records.write_table(counts, snakemake.output.counts)
records.write_table(controls.deltas(table), snakemake.output.deltas)
Path(snakemake.output.tex).write_text(tex)
Path(snakemake.output.html).write_text(html)
print(table[table["selected"]].to_string(), counts.to_string(), sep="\n")
