"""One twin pair (Section 6, Appendix D.5): train both copies, write the run record. An identity
twin that is not bit-identical to its base fails the job, naming the pair."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab import records, twins  # noqa: E402

w, settings = snakemake.wildcards, snakemake.params.settings
model = twins.model_config(settings).name
if w.model != model:
    raise SystemExit(f"{snakemake.output[0]}: the config's twin model is {model}, not {w.model}")
twin, sigma = twins.parse_variant(w.variant)
pair = twins.Pair(w.optimizer, twin, int(w.init), int(w.seed), sigma)
record = twins.train_pair(pair, settings, threads=snakemake.threads)
records.write_json(snakemake.output[0], record)
print(f"{pair}: {record['status']}, drift at step 1 {record['curve'][1][1]:.3e}, final {record['curve'][-1][1]:.3e}, "
      f"{record['wall_s']:.1f} s" + (" (determinism OK)" if record["identity_exact"] else ""))
