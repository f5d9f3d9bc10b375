# Configuration, validation and path helpers shared by every rules file.
import sys
from pathlib import Path

sys.path.insert(0, str(Path(workflow.basedir) / "src"))

from gaugelab import config as gaugelab_config
from gaugelab import corpus as gaugelab_corpus
from gaugelab import controls as gaugelab_controls
from gaugelab import dial as gaugelab_dial
from gaugelab import records as gaugelab_records
from gaugelab import runner as gaugelab_runner
from gaugelab import twin_summary as gaugelab_twin_summary
from gaugelab import twins as gaugelab_twins


# Fills the schema's defaults and fails, naming the key, on anything unknown or out of range.
gaugelab_config.validate(config)

# Every sensing experiment by name with its resolved settings: the zoo and the arms of Section
# 5's controls, each derived from the zoo's testbed (gaugelab.controls).
SENSING = gaugelab_controls.sensing_experiments(config)
SENSING_EXPERIMENTS = list(SENSING)

# Extension points: each rules file appends its comparison part (a CSV of published-vs-reproduced
# rows) and the products its family contributes to the default target.
COMPARISON_PARTS = []
DEFAULT_TARGETS = []


wildcard_constraints:
    seed=r"\d+",
    shard=r"\d+",
    method=r"[a-z_]+",
    experiment=r"[a-z0-9_]+",
    optimizer=r"[a-z_]+",
    variant=r"gauge|identity|noise[0-9.e+-]+",
    init=r"\d+",
    model=r"[A-Za-z0-9-]+",


def lr_tag(lr):
    """Path form of a learning rate; float(lr_tag(x)) == x exactly."""
    return repr(float(lr))


def run_path(experiment, method, lr, seed):
    return f"results/runs/{experiment}/{method}/lr{lr_tag(lr)}/seed{seed}.json"


def experiment_runs(experiment):
    return [run_path(experiment, *cell) for cell in experiment_cells(experiment)]


# A sensing experiment's runs are dealt over SHARDS training jobs, seed by seed (runner.deal), and
# its sensitivity reruns likewise. Records do not depend on the grouping (sensing.Layout): it is a
# speed choice.
SHARDS = config["shards"]


def experiment_cells(experiment):
    """Every (method, lr, seed) of an experiment, in a fixed order."""
    exp = SENSING[experiment]
    return [(method, lr, seed) for method, grid in exp["grids"].items() for lr in grid for seed in config["seeds"]]


def shard_cells(experiment, shard):
    return gaugelab_runner.deal(experiment_cells(experiment), SHARDS, seed=lambda c: c[2], method=lambda c: c[0])[shard]


def sensitivity_bundles(experiment):
    return [f"results/runs/{experiment}/sensitivity_shard{shard}.json" for shard in range(SHARDS)]


def dial_labels():
    return list(gaugelab_dial.variants(config["dial"]["ps"], config["dial"]["conventions"]))


def dial_runs():
    return [
        run_path("dial", name, lr, seed)
        for name in dial_labels()
        for lr in config["dial"]["lrs"]
        for seed in config["seeds"]
    ]


def twin_run_path(pair):
    """results/runs/twins/<model>/<optimizer>/<twin variant>/init<init>_seed<twin seed>.json"""
    model = gaugelab_twins.model_config(config["twins"]).name
    return (f"results/runs/twins/{model}/{pair.optimizer}/{pair.variant}/"
            f"init{pair.init_seed}_seed{pair.twin_seed}.json")


def twin_runs(*set_names):
    """Record paths of the named run sets (default: every set), each pair once."""
    sets = gaugelab_twin_summary.sets_of(config["twins"])
    chosen = {name: pairs for name, pairs in sets.items() if not set_names or name in set_names}
    return [twin_run_path(pair) for pair in gaugelab_twin_summary.unique_pairs(chosen)]


def comparison_records():
    """Every record the default target's comparison rests on (the numerics table reads them)."""
    paths = [p for e in SENSING_EXPERIMENTS for p in experiment_runs(e)] + sensitivity_bundles("zoo")
    paths += dial_runs() + twin_runs()
    return paths + [gaugelab_suite64.step1_path(model) for model in config["table9"]["configs"]]


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
    bad += [p for p in twin_runs() if Path(p).exists() and not gaugelab_records.is_valid(p, twin=True)]
    for path in bad:
        Path(path).rename(f"{path}.invalid")
        print(f"gaugelab: {path} is not a valid record; set aside as {path}.invalid, "
              "its job will rerun", file=sys.stderr)
    if bad:
        for product in Path("results").glob("*/*"):
            if product.parts[1] != "runs" and product.is_file():
                product.unlink()


set_aside_invalid_records()
