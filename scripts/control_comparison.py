"""A control's published numbers beside the reproduced ones (the control is a wildcard), with the
measured sensitivity of the cells they rest on."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(snakemake.scriptdir).parent / "src"))  # works without an install too
sys.stdout = sys.stderr = open(snakemake.log[0], "w", buffering=1)  # line by line: `tail -f` follows a job

from gaugelab.paper import compare, published  # noqa: E402
from gaugelab.paper import sensing_quantities as sq  # noqa: E402
from gaugelab.core import records, sealed  # noqa: E402
from gaugelab.sensing import select  # noqa: E402

sealed.made_from_job(snakemake)  # the seal of every file it writes names its inputs

p = snakemake.params
table = records.read_table(snakemake.input.table)


def sens(paths: dict):
    """The measured sensitivity of one arm's cells: its base runs beside its perturbed reruns."""
    recs = [records.read(path) for path in paths["runs"]]
    recs += [r for path in paths["sensitivity"] for r in records.read_bundle(path)]
    return sq.sensitivity(select.frame(recs))


arms = {key: sens(paths) for key, paths in p.arms.items()}
found = {
    "nuclear_reference": lambda: sq.nuclear(table),
    "second_size": lambda: sq.second_size(table, p.tol, arms.get("second_size")),
    "schedule": lambda: sq.schedule(table, arms),
    "init_scale": lambda: sq.init_scale(table, records.read_table(snakemake.input.checks[0]),
                                        {float(k): v for k, v in arms.items()}),
    "lr_sensitivity": lambda: sq.lr_sensitivity(table, arms.get("lr_sensitivity")),
}[p.control]()
rows = compare.rows(published.controls(), found)
records.write_table(rows, snakemake.output[0])
print(rows.to_string())
