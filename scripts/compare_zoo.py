"""Table 2's published values beside the reproduced ones, with verdicts and near-tie flags."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job


from gaugelab import compare, records, select  # noqa: E402

summary = records.read_table(snakemake.input.summary)
recs = [records.read(path) for path in snakemake.input.runs]
for path in snakemake.input.sensitivity:
    recs += records.read_bundle(path)
rows = compare.table2(summary, select.frame(recs))
records.write_table(rows, snakemake.output[0])
print(rows.to_string())
