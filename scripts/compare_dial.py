"""Section 7's published dial values beside the reproduced ones."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w")

import pandas as pd  # noqa: E402

from gaugelab import compare  # noqa: E402

rows = compare.dial(pd.read_csv(snakemake.input.envelope))
rows.to_csv(snakemake.output[0], index=False)
print(rows.to_string())
