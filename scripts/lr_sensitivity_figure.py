"""App. D.2 figure: recovery against learning rate per method, flow-limit points ringed."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w")

import pandas as pd  # noqa: E402

from gaugelab import figures  # noqa: E402

rows = pd.read_csv(snakemake.input[0], keep_default_na=False, na_values=[""]).to_dict("records")
figures.save(figures.figure_lr_sensitivity(rows), snakemake.output.pdf, snakemake.output.png)
