"""Section 5's second size: the S2-selected row per method, as LaTeX and HTML."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job


from gaugelab import records, tables  # noqa: E402

summary = records.read_table(snakemake.input[0])
chosen = summary[summary["selected"]].assign(interpolates=lambda f: f["train"] < snakemake.params.tol)
columns = [("method", "text", 0), ("lr", "lr", 0), ("rec", "num", 4), ("erank", "num", 2), ("train", "sci", 0),
           ("interpolates", "text", 0)]
tex, html = tables.simple_table(chosen, columns, ["Method", "lr*", "rec", "erank", "mean train", "interpolates"],
                                "Section 5 second size")
Path(snakemake.output.tex).write_text(tex)
Path(snakemake.output.html).write_text(html)
print(chosen.to_string())
