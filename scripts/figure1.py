"""Figure 1 from the zoo's summary (the S1 selection, made once, by the summary) and its per-run
records (each method's seeds), with Table 2's published values beside it."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.paper import figures, published  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402
from gaugelab.sensing import select  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

p = snakemake.params
summary = records.read_table(snakemake.input.summary)
selected = summary[summary["selected"]].set_index("method")
runs = select.frame([records.read(path) for path in snakemake.input.runs])
rows = figures.figure1_rows(runs, selected, tol=p.tol if p.strict else None)
paper = figures.table2_published(published.of("Table 2"))
figures.save(figures.figure1(rows, strict=p.strict, published=paper), snakemake.output.pdf, snakemake.output.png)
