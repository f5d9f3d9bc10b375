"""EXTENSION (not in the paper): train one float64 twin pair, align copy 2's heads onto copy 1's
by per-head orthogonal Procrustes, merge, and measure the merged model (attention.md §13.2)."""
import os
import sys
from pathlib import Path

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # before torch starts (attention.md §8)
sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.attention import float64, float64_train  # noqa: E402
from gaugelab.attention import merge  # noqa: E402
from gaugelab.core import records, runtime  # noqa: E402
from gaugelab.attention.pairs import Pair, parse_variant  # noqa: E402
from gaugelab.attention import configs  # noqa: E402

w, p = snakemake.wildcards, snakemake.params
device = float64.configure(snakemake.threads, "cpu")
cfg = configs.config(w.model)
twin, sigma = parse_variant(w.variant)
pair = Pair(w.optimizer, twin, int(w.init), int(w.seed), sigma)
task = float64.make_task(cfg, device=device)
rec, a, b = float64_train.train_copies(pair, cfg, task, p.settings, steps=p.steps,
                                       dtype=runtime.resolve_dtype(p.settings["dtype"]), device=device)
report = merge.merge_report(a, b, cfg, task.x_val, task.y_val, task.x_train, task.y_train, tau=p.tau)
row = {"schema": records.MERGE_SCHEMA, "extension": True, "config": cfg.name, "optimizer": pair.optimizer,
       "twin": pair.twin, "init_seed": pair.init_seed, "twin_seed": pair.twin_seed, "sigma": pair.sigma,
       "steps": rec["steps_done"], "status": rec["status"], "final_drift": rec["curve"][-1][1], **report,
       "env": rec["env"], "provenance": merge.provenance(rec["provenance"], p.tau)}
records.write_json(snakemake.output[0], row)
print(f"EXTENSION {cfg.name} {pair} after {rec['steps_done']} steps: QK max {report['qk_max']:.2e}, "
      f"aligned merge drift to A {report['aligned_drift_to_a']:.2e}, naive {report['naive_drift_to_a']:.2e}")
