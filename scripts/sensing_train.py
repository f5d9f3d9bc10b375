"""One training job: a shard of an experiment's runs (method, lr, seed), as one batch; its
outputs, the runs' record paths (rules/common.smk: run_path), say which."""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.core import records  # noqa: E402
from gaugelab.sensing import runner  # noqa: E402

RUN_PATH = re.compile(r"results/runs/[^/]+/(?P<method>[^/]+)/lr(?P<lr>[^/]+)/seed(?P<seed>\d+)\.json")

p = snakemake.params
cells = [(m["method"], int(m["seed"]), float(m["lr"]), 0.0) for m in map(RUN_PATH.fullmatch, snakemake.output)]
recs = runner.run_batch(p.experiment, p.settings, cells, dtype=p.dtype, device=p.device,
                        threads=snakemake.threads)
for path, record in zip(snakemake.output, recs):
    records.write_json(path, record)
    print(f"{path}: {record['status']} at step {record['steps']}, rec {record['rec']:.4f}")
