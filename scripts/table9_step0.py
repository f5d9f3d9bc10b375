"""Step 0 of the float64 twins of one configuration and init seed: the base and each copy 2 after
its twin transform, measured before any update. It does not depend on the optimizer, so every
step-1 job at this init seed reads it. An identity twin that is not bit-identical to its base
fails the job, naming the pair."""
# The opening (CUBLAS's setting before torch, the header of every script, float64.setup) is
# table9_step1.py's too, on purpose: Snakemake glue, kept in each script so that each reads alone.
import os
import sys
from pathlib import Path

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # before torch starts (attention.md §8)
sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.attention import float64, float64_step1  # noqa: E402
from gaugelab.attention.pairs import Pair  # noqa: E402
from gaugelab.core import records  # noqa: E402

w, p = snakemake.wildcards, snakemake.params
cfg, task, dtype, device = float64.setup(w.model, {"dtype": p.dtype}, threads=snakemake.threads, device=p.device,
                                         corpus_path=snakemake.input.corpus[0] if snakemake.input.corpus else None)
rec = float64_step1.step0(cfg, task, int(w.init), [Pair.from_row(row) for row in p.twins], dtype=dtype,
                          device=device)
records.write_json(snakemake.output[0], rec)
for point in rec["points"]:
    print(f"{cfg.name} init {w.init} {point['twin']} twin (seed {point['twin_seed']}, sigma {point['sigma']:g}): "
          f"drift step 0 {point['point'][1]:.3e}" + (" determinism OK" if point["twin"] == "identity" else ""))
print(f"{cfg.name} init {w.init}: {len(rec['points'])} twins, {rec['wall_s']:.1f} s")
