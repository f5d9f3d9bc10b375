"""App. D.10's published value beside the reproduction: the audit's (T, cos, 3e-3) cell against Table
2's signum row, read against the ensemble of Table 2's cell."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.paper import compare, opt_in_quantities, published  # noqa: E402
from gaugelab.paper import sensing_quantities as sq  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402
from gaugelab.optim import cards  # noqa: E402
from gaugelab.sensing import select  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

table = records.read_table(snakemake.input.table)
zoo = records.read_table(snakemake.input.zoo_summary)
recs = [records.read(path) for path in snakemake.input.zoo_runs]
recs += [r for path in snakemake.input.zoo_sensitivity for r in records.read_bundle(path)]
spread = sq.spread(sq.sensitivity(select.frame(recs)), cards.SIGNUM, published.SIGNUM_AUDIT_LR)
found = opt_in_quantities.signum_audit(table, zoo, spread, snakemake.params.budget, published.SIGNUM_AUDIT_LR)
rows = compare.rows(published.SIGNUM_AUDIT, found)
records.write_table(rows, snakemake.output[0])
print(rows.to_string())
