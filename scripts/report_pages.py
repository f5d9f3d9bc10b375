"""The report's landing page (the workflow description followed by the verdict) and the
reproduction appendix (a LaTeX document inputting every generated table and figure)."""
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.core import records, sealed  # noqa: E402
from gaugelab.paper import pages  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

TEXT = {c: str for c in ("published", "at", "tolerance", "where", "why", "note")}
comparison = records.read_table(snakemake.input.comparison, keep_default_na=False, na_values=[""], dtype=TEXT)
comparison = comparison.fillna({c: "" for c in TEXT})
products = snakemake.params.products
links = pages.by_section([Path(p).name for p in products if p.endswith((".html", ".png"))
                          and p.startswith(("results/tables/", "results/figures/"))])
intro = Path(snakemake.input.intro).read_text()
numerics = records.read_table(snakemake.input.numerics)
sealed.write(snakemake.output.landing, pages.landing_rst(intro, comparison, links, numerics, snakemake.params.not_run))
here = Path(snakemake.output.appendix).parent
relative = lambda p: os.path.relpath(p, here)
latex_tables = pages.by_section([relative(p) for p in products
                                 if p.startswith("results/tables/") and p.endswith(".tex")])
figures = pages.by_section([relative(p) for p in products if p.startswith("results/figures/") and p.endswith(".pdf")])
sealed.write(snakemake.output.appendix,
             pages.appendix_tex(latex_tables, figures, relative(snakemake.input.macros), comparison))
print(f"landing page and appendix: {sum(map(len, latex_tables.values()))} tables, "
      f"{sum(map(len, figures.values()))} figures")
