"""One training job: a shard of an experiment's runs (method, lr, seed), as one batch."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab import records, runner  # noqa: E402

p = snakemake.params
cells = [(method, seed, lr, 0.0) for method, lr, seed in p.cells]
recs = runner.run_batch(p.experiment, p.settings, cells, dtype=p.dtype, device=p.device,
                        threads=snakemake.threads)
for path, record in zip(snakemake.output, recs):
    records.write_json(path, record)
    print(f"{path}: {record['status']} at step {record['steps']}, rec {record['rec']:.4f}")
