"""Rerun the cells the comparison rests on (each method's selected lr, its runner-up, and the
published lr, on every seed) with the initial U scaled by (1 + delta): this job's shard of them
(runner.deal), as one batch."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

import math  # noqa: E402

from gaugelab import published, records, runner, select  # noqa: E402

w, p = snakemake.wildcards, snakemake.params
runs = select.frame([records.read(path) for path in snakemake.input.runs])
scored = select.select(select.aggregate(runs), p.settings["grids"], p.rule, p.settings["tol"])
cells = []
for method, grid in p.settings["grids"].items():
    chosen = scored[scored["selected"] & (scored["method"] == method)]
    lrs = set(chosen["lr"]) | {x for x in chosen["runner_up_lr"] if math.isfinite(x)}
    try:
        published_lr = published.lookup("Table 2", method, "lr").value if w.experiment == "zoo" else None
    except KeyError:
        published_lr = None
    if published_lr in grid:
        lrs.add(published_lr)
    cells += [(method, seed, lr, delta) for lr in sorted(lrs) for seed in p.seeds for delta in p.perturbations]
cells = runner.deal(cells, p.shards, seed=lambda c: c[1], method=lambda c: c[0])[p.shard]
recs = runner.run_batch(w.experiment, p.settings, cells, dtype=p.dtype, device=p.device,
                        threads=snakemake.threads) if cells else []
records.write_bundle(snakemake.output[0], recs, *runner.bundle_identity(w.experiment, p.settings, p.shard, p.shards,
                                                                      p.seeds, p.perturbations, p.dtype))
print(f"{len(recs)} perturbed runs: " + ", ".join(f"{r['method']} lr {r['lr']:g} rec {r['rec']:.4f}" for r in recs))
