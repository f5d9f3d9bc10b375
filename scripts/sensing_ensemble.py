"""Rerun an experiment's chaotic cells (sensing_quantities.chaotic_cells: the cells the comparison
rests on whose rec the first perturbation moved at the printed digits) on every seed under the
ensemble's further perturbations: the spread a chaotic cell's verdict is read against. This job's
shard of them (dealing.deal: whole seeds, as the first reruns are dealt), as one batch. A rerun
that an experiment sharing this one's runs already made (the `shared` bundles) is taken from it."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.paper import sensing_quantities as sq  # noqa: E402
from gaugelab.core import records  # noqa: E402
from gaugelab.sensing import controls, dealing, select  # noqa: E402

w, p = snakemake.wildcards, snakemake.params
base = [records.read(path) for path in snakemake.input.runs]
first = [r for path in snakemake.input.first for r in records.read_bundle(path)]
reran = list(dict.fromkeys((r["method"], r["lr"]) for r in first))
chaotic = sq.chaotic_cells(select.frame(base + first), reran, p.chaotic)
cells = [(method, seed, lr, delta) for method, lr in chaotic for seed in p.seeds for delta in p.perturbations]
cells = dealing.deal(cells, p.shards, seed=lambda c: c[1], method=lambda c: c[0])[p.shard]
made = [r for path in snakemake.input.shared for r in records.read_bundle(path)]
rules = None
if w.experiment == "dial" and cells:  # torch is imported only for a cell to train: most experiments have none
    from gaugelab.sensing import dial

    rules = dial.variants(p.settings["ps"], p.settings["conventions"])
recs, taken = controls.rerun(w.experiment, p.settings, cells, base, made, rules=rules, dtype=p.dtype,
                             device=p.device, threads=snakemake.threads)
records.write_bundle(snakemake.output[0], recs, *sq.bundle_identity(w.experiment, p.settings, p.shard, p.shards,
                                                                      p.seeds, p.perturbations, p.dtype, p.chaotic))
print(f"chaotic cells (rec moved by more than {p.chaotic:g}): {chaotic or 'none'}; {len(recs)} perturbed runs "
      f"({taken} taken from the shared bundles)")
