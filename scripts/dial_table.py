"""The dial table as LaTeX and HTML."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job


from gaugelab import records, tables  # noqa: E402

envelope = records.read_table(snakemake.input.envelope)
verdicts = records.read_table(snakemake.input.fixed_lr)
Path(snakemake.output.tex).write_text(tables.dial_latex(envelope, verdicts))
Path(snakemake.output.html).write_text(tables.dial_html(envelope, verdicts))
