"""Rerun the cells the comparison depends on (published lr, selected lr and its runner-up) with
the initial U scaled by (1 + delta), one seed, all such runs of a method as one batch."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w")

import math  # noqa: E402

from gaugelab import published, records, runner, select  # noqa: E402

w, p = snakemake.wildcards, snakemake.params
runs = select.frame([records.read(path) for path in snakemake.input])
scored = select.select(select.aggregate(runs), {w.method: p.grid}, p.rule, p.settings["tol"])
chosen = scored[scored["selected"]]
lrs = set(chosen["lr"]) | {x for x in chosen["runner_up_lr"] if math.isfinite(x)}
try:
    published_lr = published.lookup("Table 2", w.method, "lr").value if w.experiment == "zoo" else None
except KeyError:
    published_lr = None
if published_lr in p.grid:
    lrs.add(published_lr)
cells = [(lr, delta) for lr in sorted(lrs) for delta in p.perturbations]
recs = []
if cells:
    recs = runner.run_cells(w.experiment, p.settings, w.method, p.seed, [c[0] for c in cells],
                            perturbations=[c[1] for c in cells], dtype=p.dtype, device=p.device,
                            threads=snakemake.threads)
records.write_bundle(snakemake.output[0], recs)
print(f"{len(recs)} perturbed runs: " + ", ".join(f"lr {r['lr']:g} rec {r['rec']:.4f}" for r in recs))
