"""List the runs that two experiments of the default target (or of a --config YAML) share: the
same method, lr and seed, and the same digest of every setting that determines the numbers
(runner.run_settings, records.settings_digest). The workflow trains each once
(controls.run_sources: the later experiment reads the earlier one's record), and the runs of the
decay control that are the first steps of another arm's (controls.run_prefixes), or whose first
steps are the zoo's runs (controls.run_hosts).

    python benchmarks/shared_runs.py [--config my.yaml] [--list]
"""

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

import yaml  # noqa: E402

from gaugelab.core import config as gconfig  # noqa: E402
from gaugelab.core import records  # noqa: E402
from gaugelab.sensing import controls, dial, runner  # noqa: E402


def runs(cfg):
    """(experiment, method, lr, seed) -> identity of the run, for every sensing and dial run."""
    experiments = controls.sensing_experiments(cfg)
    out = {}
    for name, exp in experiments.items():
        for method, grid in exp["grids"].items():
            digest = records.settings_digest(runner.run_settings(exp, method, cfg["dtype"]))
            out.update({(name, method, lr, seed): (method, float(lr), seed, digest)
                        for lr in grid for seed in cfg["seeds"]})
    d = cfg["dial"]
    for label in dial.variants(d["ps"], d["conventions"]):
        digest = records.settings_digest(runner.run_settings(d, label, cfg["dtype"]))
        out.update({("dial", label, lr, seed): (label, float(lr), seed, digest)
                    for lr in d["lrs"] for seed in cfg["seeds"]})
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", help="a config YAML (default: config.yaml)")
    parser.add_argument("--list", action="store_true", help="print every shared run, not only the counts")
    args = parser.parse_args()
    raw = yaml.safe_load(Path(args.config).read_text()) if args.config else gconfig.load()
    cfg = gconfig.validate(dict(raw))
    found = runs(cfg)
    groups = {}
    for key, identity in found.items():
        groups.setdefault(identity, []).append(key)
    shared = {identity: keys for identity, keys in groups.items() if len(keys) > 1}
    by_experiments = Counter(tuple(k[0] for k in keys) for keys in shared.values())
    total = len(found)
    print(f"{total} runs, {len(groups)} distinct: {total - len(groups)} made by another experiment")
    for names, count in by_experiments.most_common():
        print(f"  {count:4d} runs shared by {' = '.join(names)}")
    experiments = controls.sensing_experiments(cfg)
    sources = controls.run_sources(experiments, cfg["seeds"], cfg["dtype"])
    reused = sum(src != name for (name, *_), src in sources.items())
    print(f"the workflow reads {reused} of them from another experiment's record (controls.run_sources)")
    if reused != total - len(groups):
        sys.exit("run_sources misses shared runs")
    arms = {arm: experiments[arm] for arm in controls.schedule_arms(cfg)}
    prefixes = controls.run_prefixes(arms, sources, cfg["dtype"])
    for (short, long), count in Counter((key[0], long) for key, long in prefixes.items()).items():
        print(f"  {count:4d} runs of {short} are the first steps of {long}'s, and written from them "
              "(controls.run_prefixes)")
    hosts = controls.run_hosts({"zoo": experiments["zoo"], **arms}, sources, cfg["dtype"], "zoo")
    for (long, host), count in Counter((key[0], host) for key, host in hosts.items()).items():
        print(f"  {count:4d} runs of {long} have {host}'s runs as their first steps, and are trained by {host}'s "
              "jobs in their place (controls.run_hosts)")
    if args.list:
        for keys in shared.values():
            print(" ", " = ".join(f"{e}/{m}/lr{lr!r}/seed{s}" for e, m, lr, s in keys))


if __name__ == "__main__":
    main()
