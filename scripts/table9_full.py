"""One full-length float64 twin pair of Table 9 (a GPU job where one is at hand). An identity twin
that is not bit-identical to its base fails the job, naming the pair."""
import os
import sys
from pathlib import Path

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # before torch starts (attention.md §8)
sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab import records, suite64, twins  # noqa: E402

w, settings = snakemake.wildcards, snakemake.params.settings
cfg, task, dtype, device = suite64.setup(w.model, settings, threads=snakemake.threads, device=snakemake.params.device,
                                         corpus_path=snakemake.input.corpus[0] if snakemake.input.corpus else None)
twin, sigma = twins.parse_variant(w.variant)
pair = twins.Pair(w.optimizer, twin, int(w.init), int(w.seed), sigma)
record = suite64.train_pair(pair, cfg, task, settings, steps=snakemake.params.steps, dtype=dtype, device=device)
records.write_json(snakemake.output[0], record)
print(f"{cfg.name} {pair}: {record['status']}, drift at step 1 {record['curve'][1][1]:.3e}, "
      f"final {record['curve'][-1][1]:.3e}, {record['wall_s']:.1f} s on {device}"
      + (" (determinism OK)" if record["identity_exact"] else ""))
