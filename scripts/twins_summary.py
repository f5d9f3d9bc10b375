"""Twin extraction: one summary row per pair (drift, QK drift at every checkpoint, finals) and the
Appendix D.5 quantities."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.core import records, sealed  # noqa: E402
from gaugelab.paper import twin_summary as ts  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

sets = ts.sets_of({"sets": snakemake.params.sets})
summary = ts.frame([records.read_twin(path) for path in snakemake.input.runs], sets)
records.write_table(summary, snakemake.output.summary)
d5 = ts.d5_summary(summary, snakemake.params.tau)
records.write_table(d5, snakemake.output.d5)
print(d5.to_string())
