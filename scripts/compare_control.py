"""A control's published numbers beside the reproduced ones (the control is a wildcard)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w")

import pandas as pd  # noqa: E402

from gaugelab import compare  # noqa: E402

p = snakemake.params
frame = pd.read_csv(snakemake.input[0])
rows = {"nuclear_reference": lambda: compare.nuclear(frame),
        "second_size": lambda: compare.second_size(frame, p.tol),
        "schedule": lambda: compare.schedule(frame)}[p.control]()
rows.to_csv(snakemake.output[0], index=False)
print(rows.to_string())
