"""App. D.10's published claim beside the reproduction: the audit's (T, cos, 3e-3) cell is Table 2's."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab import compare, published, records, signum_audit  # noqa: E402

table = records.read_table(snakemake.input.table)
zoo = records.read_table(snakemake.input.zoo_summary)
found = signum_audit.consistency(table, zoo, snakemake.params.budget, published.SIGNUM_AUDIT_LR)
rows = compare.rows(published.SIGNUM_AUDIT, found)
records.write_table(rows, snakemake.output[0])
print(rows.to_string())
