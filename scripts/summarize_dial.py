"""Dial extraction: S4 per variant (arm A), the tuned envelope, and arm B's verdict per lr."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w")

from gaugelab import dial, records, select  # noqa: E402

s = snakemake.params.settings
runs = select.frame([records.read(path) for path in snakemake.input])
names = dial.variants(s["ps"], s["conventions"])
summary = select.select(select.aggregate(runs), {name: s["lrs"] for name in names}, "S4", s["tol"])
summary.to_csv(snakemake.output.summary, index=False)
envelope = dial.envelope(summary, s["ps"], s["conventions"])
envelope.to_csv(snakemake.output.envelope, index=False)
verdicts = dial.fixed_lr_verdicts(summary, s["ps"], s["lrs"], s["budget"]) if "rms" in s["conventions"] else None
(verdicts if verdicts is not None else envelope.iloc[0:0]).to_csv(snakemake.output.fixed_lr, index=False)
print(envelope.to_string())
