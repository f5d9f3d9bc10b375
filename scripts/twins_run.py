"""The twin pairs of one copy 1 (Section 6, Appendix D.5): train that copy once, beside copy 2 of
every pair that shares it, and write one run record per pair. An identity twin that is not
bit-identical to its base fails the job, naming the pair."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.attention import harness, twins  # noqa: E402
from gaugelab.core import records  # noqa: E402
from gaugelab.attention.pairs import Pair  # noqa: E402

settings = snakemake.params.settings
pairs = [Pair.from_row(row) for row in snakemake.params.pairs]
paths = dict(zip(pairs, snakemake.output))


def done(pair, record):
    records.write_json(paths[pair], record)
    print(f"{pair}: {harness.summary(record)}")


twins.train_base(pairs, settings, threads=snakemake.threads, log=done)
