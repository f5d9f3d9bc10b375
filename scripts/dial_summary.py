"""Dial extraction: S4 per variant (arm A), the tuned envelope, and arm B's verdict per lr."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.core import records, sealed  # noqa: E402
from gaugelab.sensing import dial, select  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

s = snakemake.params.settings
runs = select.frame([records.read(path) for path in snakemake.input.runs])
names = dial.variants(s["ps"], s["conventions"])
summary = select.select(select.aggregate(runs), {name: s["lrs"] for name in names}, "S4", s["tol"])
records.write_table(summary, snakemake.output.summary)
envelope = dial.envelope(summary, s["ps"], s["conventions"])
records.write_table(envelope, snakemake.output.envelope)
verdicts = dial.fixed_lr_verdicts(summary, s["ps"], s["lrs"], s["budget"]) if "rms" in s["conventions"] else None
records.write_table((verdicts if verdicts is not None else envelope.iloc[0:0]), snakemake.output.fixed_lr)
print(envelope.to_string())
