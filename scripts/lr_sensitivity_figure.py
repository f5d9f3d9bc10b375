"""App. D.2 figure: recovery against learning rate per method, flow-limit points ringed, the
paper's flow-limit rows (gaugelab.paper.published, App. D.2) as markers."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job


from gaugelab.paper import figures, published  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

rows = records.read_table(snakemake.input[0], keep_default_na=False, na_values=[""]).to_dict("records")
paper = figures.flow_limit_published(published.of("App. D.2"))
figures.save(figures.figure_lr_sensitivity(rows, paper), snakemake.output.pdf, snakemake.output.png)
