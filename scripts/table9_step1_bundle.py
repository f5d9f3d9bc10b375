"""One float64 configuration's step-1 bundle from its copy 1s' parts (table9_step1), each pair's
record as its part made it, in the configured order of the pairs: the bundle one job over every
pair would write."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.attention import float64  # noqa: E402
from gaugelab.core import records  # noqa: E402
from gaugelab.attention.pairs import Pair  # noqa: E402

p, model = snakemake.params, snakemake.wildcards.model
made = {}
for path, rows in zip(snakemake.input.parts, p.parts):
    members = records.load(path, records.TWIN_BUNDLE_SCHEMA)["records"]
    if len(members) != len(rows):
        raise records.RecordError(f"{path}: {len(members)} records for {len(rows)} pairs")
    made.update(zip((Pair.from_row(row) for row in rows), members))
pairs = [Pair.from_row(row) for row in p.pairs]
float64.write_bundle(snakemake.output[0], [made[pair] for pair in pairs],
                     float64.step1_provenance(model, p.settings, pairs))
print(f"{model}: {len(pairs)} pairs from {len(p.parts)} parts")
