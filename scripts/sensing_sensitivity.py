"""Rerun the cells the comparison rests on (sensing_quantities.rerun_cells: the selected cells of
the published rows, and for the zoo each runner-up and the published lr), on every seed, with the
initial U scaled by (1 + delta): this job's shard of them (dealing.deal), as one batch. A rerun that
an experiment sharing this one's runs already made (the `shared` bundles) is taken from it."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.paper import sensing_quantities as sq  # noqa: E402
from gaugelab.core import records  # noqa: E402
from gaugelab.sensing import controls, dealing, select  # noqa: E402

w, p = snakemake.wildcards, snakemake.params
base = [records.read(path) for path in snakemake.input.runs]
cells = [(method, seed, lr, delta) for method, lr in sq.rerun_cells(w.experiment, p.settings, select.frame(base))
         for seed in p.seeds for delta in p.perturbations]
cells = dealing.deal(cells, p.shards, seed=lambda c: c[1], method=lambda c: c[0])[p.shard]
made = [r for path in snakemake.input.shared for r in records.read_bundle(path)]
rules = None
if w.experiment == "dial" and cells:  # torch is imported only for a cell to train
    from gaugelab.sensing import dial

    rules = dial.variants(p.settings["ps"], p.settings["conventions"])
recs, taken = controls.rerun(w.experiment, p.settings, cells, base, made, rules=rules, dtype=p.dtype,
                             device=p.device, threads=snakemake.threads)
records.write_bundle(snakemake.output[0], recs, *sq.bundle_identity(w.experiment, p.settings, p.shard, p.shards,
                                                                      p.seeds, p.perturbations, p.dtype))
print(f"{len(recs)} perturbed runs ({taken} taken from the shared bundles): "
      + ", ".join(f"{r['method']} lr {r['lr']:g} rec {r['rec']:.4f}" for r in recs))
