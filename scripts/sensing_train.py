"""One training job: a shard of an experiment's runs (method, lr, seed), as one batch; its
outputs, the runs' record paths (rules/common.smk: run_path), say which. Outputs in another arm's
folder are that arm's shorter runs that are the first steps of this shard's runs of the same
method, lr and seed (RUN_PREFIX), or its longer runs whose first steps this shard's runs are,
trained in their place (RUN_HOST)."""
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
own, others = {}, []
for path in snakemake.output:
    m = RUN_PATH.fullmatch(path)
    cell = (m["method"], int(m["seed"]), float(m["lr"]), 0.0)
    if m["experiment"] == p.experiment:
        own[cell] = path
    else:
        others.append((m["experiment"], cell, path))
cells, paths = list(own), list(own.values())
arms, prefixes, prefix_paths = {}, {}, []
for name, cell, path in others:
    i = cells.index(cell)
    if i in prefixes:
        raise ValueError(f"{path}: the run of {cell} already gives another arm's record")
    if name in p.hosted:  # the longer run in place of this experiment's, which is its first steps
        arms[i], prefixes[i] = (name, p.hosted[name]), (p.experiment, p.settings)
        prefix_paths.append(paths[i])
        paths[i] = path
    else:
        prefixes[i] = (name, p.prefixes[name])
        prefix_paths.append(path)
recs = runner.run_batch(p.experiment, p.settings, cells, dtype=p.dtype, device=p.device,
                        threads=snakemake.threads, arms=arms, prefixes=prefixes)
for path, record in zip(paths + prefix_paths, recs):
    records.write_json(path, record)
    print(f"{path}: {record['status']} at step {record['steps']}, rec {record['rec']:.4f}")
