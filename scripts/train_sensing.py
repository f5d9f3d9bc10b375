"""One training job: a method on one seed's instance, all its learning rates as one batch."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w")

from gaugelab import records, runner  # noqa: E402

p = snakemake.params
recs = runner.run_cells(p.experiment, p.settings, p.method, p.seed, p.lrs, dtype=p.dtype,
                        device=p.device, threads=snakemake.threads)
for path, record in zip(snakemake.output, recs):
    records.write_json(path, record)
    print(f"{path}: {record['status']} at step {record['steps']}, rec {record['rec']:.4f}")
