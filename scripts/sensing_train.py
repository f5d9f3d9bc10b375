"""One training job: a shard of an experiment's runs (method, lr, seed), as one batch; its
outputs, the runs' record paths (rules/common.smk: run_path), say which. Outputs in another arm's
folder are the records of that arm's shorter runs that are the first steps of this shard's runs of
the same method, lr and seed (rules/common.smk: RUN_PREFIX)."""
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.core import records  # noqa: E402
from gaugelab.sensing import runner  # noqa: E402

RUN_PATH = re.compile(
    r"results/runs/(?P<experiment>[^/]+)/(?P<method>[^/]+)/lr(?P<lr>[^/]+)/seed(?P<seed>\d+)\.json")

p = snakemake.params
matches = [RUN_PATH.fullmatch(path) for path in snakemake.output]
cells, paths, shorter = [], [], []
for path, m in zip(snakemake.output, matches):
    cell = (m["method"], int(m["seed"]), float(m["lr"]), 0.0)
    if m["experiment"] == p.experiment:
        cells.append(cell)
        paths.append(path)
    else:
        shorter.append((m["experiment"], cell, path))
prefixes = {cells.index(cell): (name, p.prefixes[name]) for name, cell, _ in shorter}
recs = runner.run_batch(p.experiment, p.settings, cells, dtype=p.dtype, device=p.device,
                        threads=snakemake.threads, prefixes=prefixes)
for path, record in zip(paths + [path for *_, path in shorter], recs):
    records.write_json(path, record)
    print(f"{path}: {record['status']} at step {record['steps']}, rec {record['rec']:.4f}")
