"""The full-length float64 twin pairs of one Table 9 configuration (a GPU job where one is at
hand): each copy 1 once, beside copy 2 of every pair that shares it, in the device's batches
(float64_train.train_pairs); one record per pair, written as its pair ends. An identity twin that
is not bit-identical to its base fails the job, naming the pair."""
import os
import sys
from pathlib import Path

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # before torch starts (attention.md §8)
sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.attention import float64, float64_train  # noqa: E402
from gaugelab.attention import harness  # noqa: E402
from gaugelab.core import records  # noqa: E402
from gaugelab.attention.pairs import Pair  # noqa: E402

p = snakemake.params
cfg, task, dtype, device = float64.setup(snakemake.wildcards.model, p.settings, threads=snakemake.threads,
                                         device=p.device,
                                         corpus_path=snakemake.input.corpus[0] if snakemake.input.corpus else None)
pairs = [Pair.from_row(row) for row in p.pairs]
paths = dict(zip(pairs, snakemake.output))


def done(pair, record):
    records.write_json(paths[pair], record)
    print(f"{cfg.name} {pair} on {device}: {harness.summary(record)}")


float64_train.train_pairs(pairs, cfg, task, p.settings, steps=p.steps, dtype=dtype, device=device,
                          max_copies=p.max_copies, log=done)
