"""Move a record that cannot be used out of its job's way (rules/common.smk: set_aside), keeping
its bytes for inspection; the job that makes the record then reruns. What is not a file of its own
leaves a note in its place: a symbolic link is removed (what it points to is not this record's), a
folder moves beside the note (<note>.folder)."""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too

from gaugelab.core import records  # noqa: E402

original, target = Path(snakemake.params.original), Path(snakemake.output[0])
if not (original.exists() or original.is_symlink()) or records.raw_digest(original) != snakemake.wildcards.digest:
    raise SystemExit(f"{original}: changed since the workflow checked it; run the workflow again")
target.parent.mkdir(parents=True, exist_ok=True)
if original.is_symlink():
    target.write_text(f"{original} was a symbolic link to {os.readlink(original)}\n")
    original.unlink()
elif original.is_dir():
    os.replace(original, f"{target}.folder")
    target.write_text(f"{original} was a folder, moved to {target}.folder\n")
else:
    os.replace(original, target)
Path(snakemake.log[0]).write_text(f"{original} -> {target}: {snakemake.params.reason}\n")
print(f"gaugelab: set aside {original} as {target}: {snakemake.params.reason}", file=sys.stderr)
