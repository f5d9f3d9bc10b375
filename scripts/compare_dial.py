"""Section 7's published dial values beside the reproduced ones."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job


from gaugelab import compare, records  # noqa: E402

rows = compare.dial(records.read_table(snakemake.input.envelope))
records.write_table(rows, snakemake.output[0])
print(rows.to_string())
