"""Figure 1, re-deriving the S1 selection from the per-run records and checking it against the
stored summary before drawing; each method's seeds and Table 2's published values beside it."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

import math  # noqa: E402


from gaugelab import figures, published, records, select  # noqa: E402

p = snakemake.params
stored = records.read_table(snakemake.input.summary)
stored = stored[stored["selected"]].set_index("method")
runs = select.frame([records.read(path) for path in snakemake.input.runs])
derived = select.select(select.aggregate(runs), p.grids, p.rule, p.tol)
derived = derived[derived["selected"]].set_index("method")
for method, row in derived.iterrows():
    assert row["lr"] == stored.loc[method, "lr"], f"{method}: re-derived lr differs from the summary"
    assert abs(row["rec"] - stored.loc[method, "rec"]) < 1e-12 or not math.isfinite(row["rec"]), method
    if p.strict:
        assert row["worst_train"] < p.tol, f"{method}: selected row did not interpolate on every seed"
rows = figures.figure1_rows(runs, derived)
paper = figures.table2_published(published.of("Table 2"))
figures.save(figures.figure1(rows, strict=p.strict, published=paper), snakemake.output.pdf, snakemake.output.png)
