# Configuration, validation and path helpers shared by every rules file.
import sys
from pathlib import Path

sys.path.insert(0, str(Path(workflow.basedir) / "src"))

from gaugelab import config as gaugelab_config
from gaugelab import records as gaugelab_records


# Fills the schema's defaults and fails, naming the key, on anything unknown or out of range.
gaugelab_config.validate(config)

SENSING_EXPERIMENTS = ["zoo"]


wildcard_constraints:
    seed=r"\d+",
    method=r"[a-z_]+",
    experiment=r"[a-z0-9_]+",


def lr_tag(lr):
    """Path form of a learning rate; float(lr_tag(x)) == x exactly."""
    return repr(float(lr))


def run_path(experiment, method, lr, seed):
    return f"results/runs/{experiment}/{method}/lr{lr_tag(lr)}/seed{seed}.json"


def method_runs(experiment, method, seed):
    """Records written by one training job: every lr of the method's grid, one seed."""
    grid = config[experiment]["grids"][method]
    return [run_path(experiment, method, lr, seed) for lr in grid]


def experiment_runs(experiment):
    exp = config[experiment]
    return [
        run_path(experiment, method, lr, seed)
        for method, grid in exp["grids"].items()
        for lr in grid
        for seed in config["seeds"]
    ]


def sensitivity_bundles(experiment):
    return [
        f"results/runs/{experiment}/{method}/sensitivity_seed{seed}.json"
        for method in config[experiment]["grids"]
        for seed in config["seeds"]
    ]


def set_aside_invalid_records():
    """A record or bundle cut short or malformed is renamed *.invalid, so its job reruns and it
    is never tabulated."""
    for experiment in SENSING_EXPERIMENTS:
        paths = [(p, False) for p in experiment_runs(experiment)]
        paths += [(p, True) for p in sensitivity_bundles(experiment)]
        for path, bundle in paths:
            if Path(path).exists() and not gaugelab_records.is_valid(path, bundle=bundle):
                Path(path).rename(path + ".invalid")
                print(f"gaugelab: {path} is not a valid record; set aside as {path}.invalid, "
                      "its job will rerun", file=sys.stderr)


set_aside_invalid_records()
