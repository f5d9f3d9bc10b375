"""The dial figure: effective rank against p (RMS), with Table 2's GD row as reference."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

import math  # noqa: E402


from gaugelab import figures, records  # noqa: E402

envelope = records.read_table(snakemake.input.envelope)
rms = envelope[envelope["convention"] == "rms"].to_dict("records")
zoo = records.read_table(snakemake.input.zoo_summary)
gd = zoo[zoo["selected"] & (zoo["method"] == "gd")]
gd_erank = float(gd["erank"].iloc[0]) if len(gd) else math.nan
fig = figures.figure_dial(rms, gd_erank, snakemake.params.rank)
figures.save(fig, snakemake.output.pdf, snakemake.output.png)
