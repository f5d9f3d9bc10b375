"""Move a record that cannot be used out of its job's way (rules/common.smk: set_aside), keeping
its bytes for inspection; the job that makes the record then reruns."""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too

from gaugelab import records  # noqa: E402

original, target = Path(snakemake.params.original), Path(snakemake.output[0])
if not original.exists() or records.raw_digest(original) != snakemake.wildcards.digest:
    raise SystemExit(f"{original}: changed since the workflow checked it; run the workflow again")
target.parent.mkdir(parents=True, exist_ok=True)
os.replace(original, target)
Path(snakemake.log[0]).write_text(f"{original} -> {target}: {snakemake.params.reason}\n")
print(f"gaugelab: set aside {original} as {target}: {snakemake.params.reason}", file=sys.stderr)
