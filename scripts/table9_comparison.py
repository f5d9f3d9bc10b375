"""Table 9's published values beside the reproduced ones."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.paper import table9  # noqa: E402
from gaugelab.attention import float64  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

step1 = [r for path in snakemake.input.step1 for r in float64.read_bundle(path)]
full = [records.read_twin(path) for path in snakemake.input.full]
rows = table9.comparison(step1, full)
records.write_table(rows, snakemake.output[0])
print(rows.to_string())
