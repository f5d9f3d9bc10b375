"""Section 7's published dial values and claims beside the reproduced ones, with the measured
sensitivity of the tuned cells."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.paper import compare, published  # noqa: E402
from gaugelab.paper import sensing_quantities as sq  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402
from gaugelab.sensing import select  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

recs = [records.read(path) for path in snakemake.input.runs]
recs += [r for path in snakemake.input.sensitivity for r in records.read_bundle(path)]
fixed = records.read_table(snakemake.input.fixed_lr)
found = sq.dial(records.read_table(snakemake.input.envelope),
                fixed if len(fixed.columns) and "verdict" in fixed else None, sq.sensitivity(select.frame(recs)))
rows = compare.rows(published.DIAL, found)
records.write_table(rows, snakemake.output[0])
print(rows.to_string())
