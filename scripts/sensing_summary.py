"""Extraction: aggregate seeds per (method, lr) cell and apply the experiment's selection rule."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.core import records, sealed  # noqa: E402
from gaugelab.sensing import select  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

p = snakemake.params
summary = select.summary([records.read(path) for path in snakemake.input.runs], p.grids, p.rule, p.tol)
records.write_table(summary, snakemake.output[0])
print(summary[summary["selected"]].to_string())
