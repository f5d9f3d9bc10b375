"""Table 2's convex reference on one seed's instance: min-nuclear-norm interpolant, float64 ADMM."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.core import records  # noqa: E402
from gaugelab.sensing import nuclear  # noqa: E402

p = snakemake.params
t = p.testbed
record = nuclear.reference(t["n"], t["rank"], t["measurements_per_dof"], p.seed, max_iter=p.settings["max_iter"],
                           tol=p.settings["tol"], threads=snakemake.threads)
records.write_json(snakemake.output[0], record)
print({key: record[key] for key in nuclear.FIELDS})
