"""The three classification counts of Section 5 with the numbers they rest on."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job


from gaugelab.paper import tables  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402
from gaugelab.sensing import controls  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

counts = controls.classification(records.read_table(snakemake.input.zoo_summary),
                                 records.read_table(snakemake.input.schedule))
records.write_table(counts, snakemake.output.csv)
columns = [("form", "text", 0), ("correct", "int", 0), ("total", "int", 0), ("verdict", "text", 0),
           ("threshold", "num", 4), ("rests_on", "text", 0)]
tex, html = tables.simple_table(counts, columns, ["Count", "correct", "of", "verdict", "threshold", "rests on"],
                                "Section 5 classification counts")
sealed.write(snakemake.output.tex, tex)
sealed.write(snakemake.output.html, html)
print(counts.to_string())
