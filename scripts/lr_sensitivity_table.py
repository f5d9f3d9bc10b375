"""App. D.2: every (method, lr) cell, the flow-limit row flagged."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job


from gaugelab import controls, records, tables  # noqa: E402

p = snakemake.params
rows = controls.lr_sensitivity(records.read_table(snakemake.input[0]), p.grids, p.tol)
records.write_table(rows, snakemake.output.csv)
columns = [("method", "text", 0), ("lr", "lr", 0), ("rec", "num", 4), ("erank", "num", 2), ("train", "sci", 0),
           ("steps", "int", 0), ("flow_limit", "text", 0), ("note", "text", 0)]
tex, html = tables.simple_table(rows, columns, ["Method", "lr", "rec", "erank", "mean train", "mean steps",
                                                "flow limit", ""], "App. D.2 learning-rate sensitivity")
Path(snakemake.output.tex).write_text(tex)
Path(snakemake.output.html).write_text(html)
print(rows.to_string())
