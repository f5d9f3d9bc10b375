"""The dial figure: effective rank against p (RMS bold, GEO thin), each RMS row's seeds, Table 2's
GD row as reference and the paper's Section 7 values as markers."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

import math  # noqa: E402


from gaugelab.paper import figures, published  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402
from gaugelab.sensing import select  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

envelope = records.read_table(snakemake.input.envelope).to_dict("records")
runs = select.frame([records.read(path) for path in snakemake.input.runs])
seeds = {(r["convention"], r["p"]): select.seed_values(runs, r["variant"], r["lr"], "erank") for r in envelope}
zoo = records.read_table(snakemake.input.zoo_summary)
gd = zoo[zoo["selected"] & (zoo["method"] == "gd")]
gd_erank = float(gd["erank"].iloc[0]) if len(gd) else math.nan
paper = figures.dial_published(published.of("Section 7 dial"))
fig = figures.figure_dial(envelope, gd_erank, snakemake.params.rank, seeds=seeds, published=paper)
figures.save(fig, snakemake.output.pdf, snakemake.output.png)
