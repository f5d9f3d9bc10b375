"""Table 9's step-1 subset for the pairs of one float64 configuration that share a copy 1: steps 0
(read from the init seed's step-0 record, table9_step0) and 1 of each, one part of the
configuration's bundle. An identity twin that is not bit-identical to its base fails the job,
naming the pair."""
# The opening (CUBLAS's setting before torch, the header of every script, float64.setup) is
# table9_full.py's and table9_step0.py's too, on purpose: Snakemake glue, kept in each script so that each reads alone.
import os
import sys
from pathlib import Path

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # before torch starts (attention.md §8)
sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.attention import float64, float64_step1  # noqa: E402
from gaugelab.attention.pairs import Pair  # noqa: E402
from gaugelab.core import records  # noqa: E402

p = snakemake.params
cfg, task, dtype, device = float64.setup(snakemake.wildcards.model, p.settings, threads=snakemake.threads,
                                         device=p.device,
                                         corpus_path=snakemake.input.corpus[0] if snakemake.input.corpus else None)
pairs = [Pair.from_row(row) for row in p.pairs]
expected = float64_step1.step0_provenance(cfg.name, snakemake.wildcards.init, p.settings["dtype"])
step0 = records.read_twin_step0(snakemake.input.step0, expected)
recs = float64_step1.step1_subset(cfg, task, pairs, p.settings, step0_records=[step0], dtype=dtype, device=device,
                                  log=lambda line: print(line, flush=True))
float64.write_bundle(snakemake.output[0], recs, float64.step1_provenance(cfg.name, p.settings, pairs))
print(f"{cfg.name}: {len(recs)} pairs, {sum(r['wall_s'] for r in recs):.1f} s")
