"""One library's optimizer census: every optimizer through the triplet, one JSON record."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.tools import census  # noqa: E402
from gaugelab.core import records  # noqa: E402

p = snakemake.params
settings = {"steps": p.steps, "dtype": p.dtype, "model": p.model}
record = census.run(snakemake.wildcards.library, settings, log=lambda line: print(line, flush=True))
records.write_json(snakemake.output[0], record)
print(census.counts(record["rows"]), f"{record['wall_s']} s")
