"""App. D.4: the selected row per (init, method) and the split check per init."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job


from gaugelab import controls, records, tables  # noqa: E402

p = snakemake.params
summaries = {scale: records.read_table(path) for scale, path in zip(p.inits, snakemake.input.summaries)}
rows, checks = controls.init_scale(summaries, records.read_table(snakemake.input.zoo_summary), p.zoo_init, p.tol)
records.write_table(rows, snakemake.output.csv)
records.write_table(checks, snakemake.output.checks)
columns = [("init", "lr", 0), ("method", "text", 0), ("class", "text", 0), ("lr", "lr", 0), ("rec", "num", 4),
           ("erank", "num", 2), ("train", "sci", 0), ("as_table2", "text", 0)]
notes = [f"init {c['init']:g}: weak check max(eq rec) {c['eq_max']:.4f} < Adam {c['adam_rec']:.4f} {c['weak_check']}; "
         f"split {c['split']}" for _, c in checks.iterrows()]
tex, html = tables.simple_table(rows, columns, ["init", "Method", "Class", "lr*", "rec", "erank", "mean train",
                                                "as Table 2"], "App. D.4 initialisation scale", notes)
Path(snakemake.output.tex).write_text(tex)
Path(snakemake.output.html).write_text(html)
print(rows.to_string(), checks.to_string(), sep="\n")
