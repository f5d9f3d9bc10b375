"""One dial training job: every Adam-p variant at every lr of one seed, as one batch."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.core import records  # noqa: E402
from gaugelab.sensing import dial, runner  # noqa: E402

p = snakemake.params
rules = dial.variants(p.settings["ps"], p.settings["conventions"])
cells = [(name, p.seed, lr, 0.0) for name in rules for lr in p.settings["lrs"]]
recs = runner.run_batch("dial", p.settings, cells, rules=rules, dtype=p.dtype, device=p.device,
                        threads=snakemake.threads)
for path, record in zip(snakemake.output, recs):
    records.write_json(path, record)
    print(f"{path}: {record['status']} at step {record['steps']}, rec {record['rec']:.4f}")
