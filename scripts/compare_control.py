"""A control's published numbers beside the reproduced ones (the control is a wildcard)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job


from gaugelab import compare, records  # noqa: E402

p = snakemake.params
frame = records.read_table(snakemake.input[0])
rows = {"nuclear_reference": lambda: compare.nuclear(frame),
        "second_size": lambda: compare.second_size(frame, p.tol),
        "schedule": lambda: compare.schedule(frame)}[p.control]()
records.write_table(rows, snakemake.output[0])
print(rows.to_string())
