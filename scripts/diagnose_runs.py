"""Every planned optimizer through the twin triplet on every configured testbed: one JSON each."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.tools import diagnose  # noqa: E402

s = snakemake.params.settings
for (label, item), path in zip(snakemake.params.plan.items(), snakemake.output):
    assert Path(path).stem == label, (label, path)
    result = diagnose.run_all(item["source"], item["testbeds"], steps=s["steps"], lr=item["lr"], dtype=s["dtype"],
                              options=item["options"], sizes={name: s[name] for name in item["testbeds"]})
    diagnose.write(result, path)
    for report in result["reports"].values():
        print(diagnose.format_line(report), flush=True)
