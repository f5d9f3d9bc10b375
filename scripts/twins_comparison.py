"""Section 6 and Appendix D.5 published values and claims beside the reproduced ones."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.paper import compare, published  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402
from gaugelab.paper import twin_summary as ts  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

summary = records.read_table(snakemake.input[0], keep_default_na=False, na_values=[""])
rows = compare.rows(published.twins(), ts.published_quantities(summary, ts.sets_of({"sets": snakemake.params.sets})))
records.write_table(rows, snakemake.output[0])
print(rows.to_string())
