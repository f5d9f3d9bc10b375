"""Table 9 as LaTeX and HTML, from the step-1 bundles and whatever full-length records exist."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab import records, suite64, table9  # noqa: E402

step1 = [r for path in snakemake.input.step1 for r in suite64.read_bundle(path)]
full = [records.read_twin(path) for path in snakemake.input.full]
table = table9.rows(step1, full)
Path(snakemake.output.tex).write_text(table9.latex(table, step1))
Path(snakemake.output.html).write_text(table9.html(table, step1))
print(f"Table 9 from {len(step1)} step-1 records and {len(full)} full-length records")
