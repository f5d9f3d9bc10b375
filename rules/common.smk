# Configuration, validation and path helpers shared by every rules file.
import sys
from pathlib import Path

sys.path.insert(0, str(Path(workflow.basedir) / "src"))

from gaugelab import config as gaugelab_config
from gaugelab import dial as gaugelab_dial
from gaugelab import records as gaugelab_records


# Fills the schema's defaults and fails, naming the key, on anything unknown or out of range.
gaugelab_config.validate(config)

SENSING_EXPERIMENTS = ["zoo"]

# Extension points: each rules file appends its comparison part (a CSV of published-vs-reproduced
# rows) and the products its family contributes to the default target.
COMPARISON_PARTS = []
DEFAULT_TARGETS = []


wildcard_constraints:
    seed=r"\d+",
    method=r"[a-z_]+",
    experiment=r"[a-z0-9_]+",


def lr_tag(lr):
    """Path form of a learning rate; float(lr_tag(x)) == x exactly."""
    return repr(float(lr))


def run_path(experiment, method, lr, seed):
    return f"results/runs/{experiment}/{method}/lr{lr_tag(lr)}/seed{seed}.json"


def experiment_runs(experiment):
    exp = config[experiment]
    return [
        run_path(experiment, method, lr, seed)
        for method, grid in exp["grids"].items()
        for lr in grid
        for seed in config["seeds"]
    ]


def sensitivity_bundles(experiment):
    return [f"results/runs/{experiment}/sensitivity_seed{seed}.json" for seed in config["seeds"]]


def dial_labels():
    return list(gaugelab_dial.variants(config["dial"]["ps"], config["dial"]["conventions"]))


def dial_runs():
    return [
        run_path("dial", name, lr, seed)
        for name in dial_labels()
        for lr in config["dial"]["lrs"]
        for seed in config["seeds"]
    ]


def set_aside_invalid_records():
    """A record or bundle cut short or malformed is renamed *.invalid and every derived product
    (summaries, tables, figures, comparison; all cheap) is removed, so nothing built on the bad
    file survives. Snakemake does not rerun a job for a missing intermediate file whose consumers
    exist; without the products, the DAG needs the record again and its job reruns."""
    bad = []
    for experiment in SENSING_EXPERIMENTS:
        paths = [(p, False) for p in experiment_runs(experiment)]
        paths += [(p, True) for p in sensitivity_bundles(experiment)]
        bad += [p for p, bundle in paths if Path(p).exists() and not gaugelab_records.is_valid(p, bundle=bundle)]
    bad += [p for p in dial_runs() if Path(p).exists() and not gaugelab_records.is_valid(p)]
    for path in bad:
        Path(path).rename(f"{path}.invalid")
        print(f"gaugelab: {path} is not a valid record; set aside as {path}.invalid, "
              "its job will rerun", file=sys.stderr)
    if bad:
        for product in Path("results").glob("*/*"):
            if product.parts[1] != "runs" and product.is_file():
                product.unlink()


set_aside_invalid_records()
