"""One full-length float64 twin pair of Table 9 (a GPU job where one is at hand). An identity twin
that is not bit-identical to its base fails the job, naming the pair."""
import os
import sys
from pathlib import Path

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # before torch starts (attention.md §8)
sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w")

from gaugelab import records, runtime, suite64, twins  # noqa: E402

w, settings = snakemake.wildcards, snakemake.params.settings
device = suite64.configure(snakemake.threads, snakemake.params.device)
cfg = suite64.config(w.model)
twin, sigma = twins.parse_variant(w.variant)
pair = twins.Pair(w.optimizer, twin, int(w.init), int(w.seed), sigma)
task = suite64.make_task(cfg, snakemake.input[0] if snakemake.input else None, device)
record = suite64.train_pair(pair, cfg, task, settings, steps=snakemake.params.steps,
                            dtype=runtime.resolve_dtype(settings["dtype"]), device=device)
records.write_json(snakemake.output[0], record)
print(f"{cfg.name} {pair}: {record['status']}, drift at step 1 {record['curve'][1][1]:.3e}, "
      f"final {record['curve'][-1][1]:.3e}, {record['wall_s']:.1f} s on {device}"
      + (" (determinism OK)" if record["identity_exact"] else ""))
