"""Section 5's controls (spec: sensing.md §10): their arms as sensing experiments, and a smoke run
of each control on a tiny testbed through the zoo's engine, extraction and comparison."""

import math

import pandas as pd
import pytest

from gaugelab.paper import compare, published
from gaugelab.paper import sensing_quantities as sq
from gaugelab import configuration
from gaugelab.core import config, records
from gaugelab.sensing import controls, runner, select


def test_arms_of_the_default_config_follow_the_protocol():
    cfg = configuration.load()
    arms = controls.sensing_experiments(cfg)
    runs = {name: sum(len(g) for g in exp["grids"].values()) * len(cfg["seeds"]) for name, exp in arms.items()}
    size = arms["second_size"]
    assert (size["n"], size["rank"], size["width"], size["decayed"], size["selection"]) == (60, 5, 60, ["muon"], "S2")
    assert runs["second_size"] == 27 and size["budget"] == 20000
    inits = [name for name in arms if name.startswith("init_scale_")]
    assert [arms[name]["init"] for name in inits] == [1e-3, 3e-3, 1e-2]
    assert sum(runs[name] for name in inits) == 135 and all(arms[n]["selection"] == "S2" for n in inits)
    assert runs["lr_sensitivity"] == 63 and arms["lr_sensitivity"]["selection"] == "S6"
    const, decay, full = (arms[controls.SCHEDULE_MODES[m]] for m in ("const", "decay", "decay-full"))
    assert const["decayed"] == [] and sorted(decay["decayed"]) == sorted(cfg["zoo"]["grids"])
    assert runs[controls.SCHEDULE_MODES["const"]] == runs[controls.SCHEDULE_MODES["decay"]] == 108
    assert not full["early_stop"] and full["tol"] == 1e-7 and runs[controls.SCHEDULE_MODES["decay-full"]] == 57
    rmsprop = arms[controls.RMSPROP_ARM]
    assert (list(rmsprop["grids"]), rmsprop["budget"], rmsprop["decayed"]) == (["rmsprop"], 60000, [])
    assert arms["zoo"] is cfg["zoo"]  # the zoo itself is untouched


def test_a_control_block_overrides_only_its_own_keys():
    cfg = configuration.validate({"zoo": {"budget": 300}, "second_size": {"n": 10}})
    size = controls.sensing_experiments(cfg)["second_size"]
    assert (size["n"], size["rank"], size["budget"]) == (10, 5, 300)


@pytest.mark.parametrize("bad, key", [
    ({"init_scale": {"inits": [0.0]}}, "init_scale/inits/0"),
    ({"schedule_control": {"full_methods": ["sgd"]}}, "schedule_control/full_methods/0"),
    ({"second_size": {"grids": {"adamw": [0.1]}}}, "second_size/grids"),
    ({"zoo": {"grids": {"gd": [0.1], "scaledgd": [1e-3]}}}, "zoo/grids/scaledgd"),  # the GPU ladder's control
    ({"phase_diagram": {"schedule_grids": {"scaledgd": [1e-3]}}}, "phase_diagram/schedule_grids/scaledgd"),
])
def test_bad_control_config_names_the_key(bad, key):
    with pytest.raises(config.ConfigError, match=f"config key {key}:"):
        configuration.validate(bad)


TINY = {"seeds": [42, 123], "zoo": {"n": 6, "rank": 1, "width": 6, "budget": 400, "tol": 1e-4,
                                     "grids": {"gd": [0.03, 0.1], "adam": [1e-2], "scalar_adam": [1e-2],
                                               "rmsprop": [1e-3], "muon": [0.1], "signum": [1e-3]}},
        "second_size": {"n": 7, "rank": 2, "width": 7, "grids": {"gd": [0.03], "adam": [1e-2], "muon": [0.1]}},
        "init_scale": {"inits": [1e-3, 1e-2], "grids": {"gd": [0.03, 0.1], "adam": [1e-2], "muon": [0.1]}},
        "lr_sensitivity": {"grids": {"gd": [0.01, 0.03, 0.1], "adam": [1e-2]}},
        "schedule_control": {"rmsprop_budget": 800, "full_methods": ["gd", "adam", "muon"]},
        # App. D.10's arms are sensing experiments too; at their default horizons (10^4 to 6x10^4
        # steps) they would be nine tenths of this module's time
        "signum_audit": {"budgets": [200, 800], "long_budget": 800}}


@pytest.fixture(scope="module")
def tiny():
    """Every arm of every control on the tiny testbed: records per experiment."""
    cfg = configuration.validate({k: (dict(v) if isinstance(v, dict) else v) for k, v in TINY.items()})
    arms = controls.sensing_experiments(cfg)
    recs = {}
    for name, exp in arms.items():
        cells = [(m, seed, lr, 0.0) for m, grid in exp["grids"].items() for lr in grid for seed in cfg["seeds"]]
        recs[name] = runner.run_batch(name, exp, cells, threads=1)
    return cfg, arms, recs


def summary(arms, recs, name):
    exp = arms[name]
    return select.select(select.aggregate(select.frame(recs[name])), exp["grids"], exp["selection"], exp["tol"])


def test_decay_full_runs_every_step(tiny):
    _, arms, recs = tiny
    full = recs[controls.SCHEDULE_MODES["decay-full"]]
    assert all(r["steps"] == 400 and r["config"]["early_stop"] is False for r in full)
    assert all(r["config"]["schedule"] == "cosine" for r in full)
    assert all(r["steps"] <= 800 and r["config"]["schedule"] == "const" for r in recs[controls.RMSPROP_ARM])


def test_schedule_control_table6_counts_and_comparison(tiny):
    cfg, arms, recs = tiny
    modes = controls.schedule_arm_names(arms)
    assert list(modes) == ["const", "decay", "decay-full", "const-60k"]
    runs = {mode: select.frame(recs[arm]) for mode, arm in modes.items()}
    table = controls.schedule(runs, {mode: arms[arm]["grids"] for mode, arm in modes.items()}, 1e-4)
    chosen = table[table["selected"]]
    for (mode, rule), picked in chosen.groupby(["mode", "rule"]):
        assert len(picked) == len(arms[modes[mode]]["grids"]), (mode, rule)  # one row per method
    assert (chosen["floor"] == ~(chosen["train"] < 1e-4)).all()
    counts = controls.midpoint_counts(table)
    assert list(zip(counts["mode"], counts["rule"])) == [(m, r) for m in ("const", "decay")
                                                         for r in ("rec-sel", "spd-sel")]
    assert (counts["total"] == 6).all()
    assert len(controls.deltas(table)) == 6
    rows = compare.rows(published.SCHEDULE + published.SCHEDULE_LOGGED, sq.schedule(table))
    assert set(rows["row"]) >= {"midpoint split (decay, rec-sel)", "rmsprop const", "rmsprop const-60k spd-sel",
                                "gd decay-full vs const", "adam decay-full vs const"}
    # the released log's rows (sensing.md §16): each rec-sel cell of the tiny grids' methods, the
    # three other split counts with the methods they miss, RMSProp at lr 1e-4 where its grid has it
    logged = rows[rows["where"] == published.SCHEDULE_LOG].set_index(["row", "quantity"])
    assert {("gd const rec-sel", "rec"), ("adam decay-full rec-sel", "erank"),
            ("midpoint split (const, spd-sel)", "count")} <= set(logged.index)
    assert "misses: " in logged.loc[("midpoint split (const, rec-sel)", "count"), "at"]
    zoo = summary(arms, recs, "zoo")
    forms = controls.classification(zoo, table)
    assert len(forms) == 3 and forms.loc[1, "total"] == 6


def test_init_scale_second_size_and_lr_sensitivity(tiny):
    cfg, arms, recs = tiny
    zoo = summary(arms, recs, "zoo")
    per_init = {scale: summary(arms, recs, controls.init_arm(scale)) for scale in cfg["init_scale"]["inits"]}
    rows, checks = controls.init_scale(per_init, zoo, cfg["zoo"]["init"], 1e-4)
    assert len(rows) == 2 * 3 and set(checks["weak_check"]) <= {"HOLDS", "FAILS"}
    at_zoo_init = rows[rows["init"] == cfg["zoo"]["init"]]
    assert at_zoo_init["as_table2"].notna().all()  # the zoo's own init: compared with Table 2's rows
    assert rows[rows["init"] != cfg["zoo"]["init"]]["as_table2"].isna().all()
    sens = controls.lr_sensitivity(summary(arms, recs, "lr_sensitivity"), arms["lr_sensitivity"]["grids"], 1e-4)
    assert len(sens) == 4 and sens.groupby("method")["flow_limit"].sum().le(1).all()
    size = summary(arms, recs, "second_size")
    assert size["selected"].sum() == 3
    assert {k[1] for k in sq.second_size(size, 1e-4)} == {"gd", "adam", "muon"}
    found = sq.init_scale(rows, checks)
    assert ("App. D.4", "init 0.001 split check", "holds") in found
    assert {k[1] for k in sq.lr_sensitivity(sens)} <= {f"{m} flow limit" for m in arms["lr_sensitivity"]["grids"]}


def test_flow_limit_is_the_smallest_interpolating_lr():
    cells = pd.DataFrame({"method": ["gd"] * 3, "lr": [0.01, 0.03, 0.1], "rec": [0.1, 0.2, 0.3], "rec_sd": [0.0] * 3,
                          "erank": [3.0] * 3, "train": [1e-3, 1e-8, 1e-9], "steps": [400, 300, 200]})
    out = controls.lr_sensitivity(cells, {"gd": [0.01, 0.03, 0.1]}, 1e-7)
    assert list(out["flow_limit"]) == [False, True, False]
    never = controls.lr_sensitivity(cells.assign(train=1.0), {"gd": [0.01, 0.03, 0.1]}, 1e-7)
    assert not never["flow_limit"].any() and set(never["note"]) == {"never interpolated on this grid"}


def test_nuclear_summary_appends_the_mean_row():
    recs = [{"seed": s, "rec": r, "erank": e, "nuc": 1.0, "nuc_truth": 1.0, "feasibility": 1e-15,
             "iterations": 10, "primal_residual": 1e-12, "converged": True}
            for s, r, e in [(42, 0.0, 3.0), (123, 0.3, 4.0)]]
    out = controls.nuclear_summary(recs)
    assert list(out["seed"]) == [42, 123, "mean"] and math.isclose(out["rec"].iloc[-1], 0.15)
    rows = compare.rows(published.NUCLEAR, sq.nuclear(out))
    assert list(rows["quantity"]) == ["rec", "erank"] and (rows["verdict"] == "differs").all()


def _run_of(record):
    """A run record without the name of the experiment that asked for it."""
    what = {k: v for k, v in record["provenance"]["what"].items() if k != "experiment"}
    return {**{k: v for k, v in record.items() if k not in ("experiment", "provenance")}, "what": what,
            "settings": record["provenance"]["settings"]}


@pytest.mark.portable
def test_a_run_shared_by_experiments_is_one_record(tiny):
    """controls.run_sources: a control arm's run with the zoo's method, lr, seed and settings digest
    is read from the zoo's record (the workflow trains it once). Trained separately for each arm,
    such runs are the same run, bit for bit, but for the experiment's name."""
    cfg, arms, recs = tiny
    sources = controls.run_sources(arms, cfg["seeds"], cfg["dtype"])
    by_cell = {name: {(r["method"], r["lr"], r["seed"]): r for r in rs} for name, rs in recs.items()}
    shared = [(name, cell, src) for (name, *cell), src in sources.items() if src != name]
    assert shared and all(src == "zoo" or list(arms).index(src) < list(arms).index(name) for name, _, src in shared)
    for name, (method, lr, seed), src in shared:
        assert _run_of(by_cell[name][(method, lr, seed)]) == _run_of(by_cell[src][(method, lr, seed)]), (name, method)
    # the init-scale arm at the zoo's init shares every run the zoo also has (App. D.4's check)
    at_zoo = controls.init_arm(cfg["zoo"]["init"])
    assert all(sources[(at_zoo, m, lr, s)] == "zoo" for m, grid in arms[at_zoo]["grids"].items()
               if m in arms["zoo"]["grids"] for lr in grid if lr in arms["zoo"]["grids"][m] for s in cfg["seeds"]
               if (m in arms["zoo"]["decayed"]) == (m in arms[at_zoo]["decayed"]))
    # and a run that differs in a setting that determines its numbers is not shared
    for (name, method, _, _), src in sources.items():
        if src != name:
            assert runner.run_settings(arms[name], method, cfg["dtype"]) == \
                runner.run_settings(arms[src], method, cfg["dtype"])


def test_the_decay_controls_shorter_runs_are_written_from_the_longer_arms():
    """controls.run_prefixes on the default configuration: schedule_const's RMSProp runs are the
    6x10^4-step arm's first steps, the decay mode's own runs of decay-full's methods decay-full's up
    to their early stop; nothing else, no run of the zoo, and no longer run gives two."""
    from gaugelab.core import config

    cfg = config.load()
    experiments = controls.sensing_experiments(cfg)
    sources = controls.run_sources(experiments, cfg["seeds"], cfg["dtype"])
    arms = {arm: experiments[arm] for arm in controls.schedule_arms(cfg)}
    prefixes = controls.run_prefixes(arms, sources, cfg["dtype"])
    pairs = {(short, method, long) for (short, method, _, _), long in prefixes.items()}
    assert pairs == {("schedule_const", "rmsprop", "schedule_rmsprop_const")} | {
        ("schedule_decay", m, "schedule_decay_full") for m in ("gd", "adam", "scalar_adam", "shampoo")}
    assert len(prefixes) == 15 + 3 * (4 + 3 + 4 + 4)
    longer = [(long, *key[1:]) for key, long in prefixes.items()]
    assert len(set(longer)) == len(longer) and all(sources[cell] == cell[0] for cell in longer)
    assert all(sources[key] == key[0] for key in prefixes)
    # with every arm's own budget, the const arm's RMSProp is no longer a prefix of anything
    same = {**arms, controls.RMSPROP_ARM: {**arms[controls.RMSPROP_ARM], "budget": cfg["zoo"]["budget"]}}
    assert not any(short == "schedule_const" for short, *_ in controls.run_prefixes(same, sources, cfg["dtype"]))


def test_the_zoos_jobs_train_decay_fulls_runs_whose_first_steps_are_the_zoos():
    """controls.run_hosts on the default configuration: decay-full's Muon runs (decayed at the
    zoo's budget, without early stop) are trained by the zoo's jobs, whose Muon runs are their first
    steps; nothing else of the decay control, and nothing of an opt-in arm the workflow leaves out."""
    from gaugelab.core import config

    cfg = config.load()
    experiments = controls.sensing_experiments(cfg)
    sources = controls.run_sources(experiments, cfg["seeds"], cfg["dtype"])
    arms = {"zoo": experiments["zoo"], **{arm: experiments[arm] for arm in controls.schedule_arms(cfg)}}
    hosts = controls.run_hosts(arms, sources, cfg["dtype"], "zoo")
    grid = cfg["zoo"]["grids"]["muon"]
    assert hosts == {("schedule_decay_full", "muon", float(lr), seed): "zoo" for lr in grid for seed in cfg["seeds"]}
    assert all(sources[key] == key[0] and sources[("zoo", *key[1:])] == "zoo" for key in hosts)
    assert not hosts.keys() & controls.run_prefixes(arms, sources, cfg["dtype"]).keys()
    # at another budget the zoo's decayed runs are no one's first steps (their lr depends on the budget)
    same = {**arms, "zoo": {**arms["zoo"], "budget": cfg["zoo"]["budget"] // 2}}
    assert controls.run_hosts(same, sources, cfg["dtype"], "zoo") == {}


def test_an_arm_takes_the_reruns_the_zoo_made_of_its_shared_runs(tiny, tmp_path):
    """A rerun is made once: the init-scale arm at the zoo's init shares the zoo's runs, so it takes
    the zoo's reruns of them (the same run, perturbation and numerics mode), stored members byte for
    byte, and trains only the rest. A run of another arm with the same method, lr and seed is
    another run (its settings digest differs); another perturbation or mode is not the same rerun."""
    cfg, arms, recs = tiny
    same, other = controls.init_arm(arms["zoo"]["init"]), controls.init_arm(1e-2)
    assert same in arms and other in arms and same != other
    delta = 1e-3
    shared = [("gd", 42, 0.03, delta), ("adam", 123, 1e-2, delta)]
    zoo_made = runner.run_batch("zoo", arms["zoo"], shared, threads=1)
    records.write_bundle(tmp_path / "zoo.json", zoo_made, {"experiment": "zoo"}, {})
    made = records.read_bundle(tmp_path / "zoo.json")
    mode = made[0]["provenance"]["numerics"]
    made += [{**made[0], "perturbation": 2 * delta},  # another perturbation
             {**made[1], "provenance": {**made[1]["provenance"], "numerics": mode + "-other"}}]  # another mode
    made += runner.run_batch(other, arms[other], [("muon", 42, 0.1, delta)], threads=1)  # another arm's run

    base = recs["zoo"]  # the arm's runs are the zoo's records
    cells = [*shared, ("muon", 42, 0.1, delta), ("gd", 42, 0.03, 2 * delta)]
    assert sorted(controls.reruns_made(cells, base, made)) == [0, 1, 3]
    assert sorted(controls.reruns_made(cells, recs[other], made)) == [2]  # the other arm: its own run only
    assert controls.reruns_made(cells, base, [made[3]]) == {}  # cell 1's rerun, but made in another mode
    out, taken = controls.rerun(same, arms[same], cells[:3], base, made[:2], threads=1)
    assert taken == 2 and out[:2] == made[:2] and out[2]["experiment"] == same
    records.write_bundle(tmp_path / "arm.json", out, {"experiment": same}, {})
    stored = records.load(tmp_path / "arm.json", records.BUNDLE_SCHEMA)["records"]
    assert stored[:2] == records.load(tmp_path / "zoo.json", records.BUNDLE_SCHEMA)["records"]
    own = runner.run_batch(same, arms[same], shared, threads=1)  # what the arm would make itself, same batch
    for mine, theirs in zip(own, out[:2]):
        assert mine["provenance"]["settings"] == theirs["provenance"]["settings"]
        assert {k: mine[k] for k in records.METRICS} == {k: theirs[k] for k in records.METRICS}
        assert mine["curve"] == theirs["curve"]


@pytest.mark.portable
def test_a_taken_rerun_is_bit_for_bit_the_one_the_arm_makes_in_its_own_batch():
    """Under the portable numerics a run's numbers do not depend on its batch, so the zoo's rerun,
    made beside other methods and seeds, is bit for bit the one the arm would make alone."""
    cfg = configuration.validate({k: (dict(v) if isinstance(v, dict) else v) for k, v in TINY.items()})
    arms = controls.sensing_experiments(cfg)
    same, delta = controls.init_arm(arms["zoo"]["init"]), 1e-3
    zoo = runner.run_batch("zoo", arms["zoo"], [("adam", 123, 1e-2, delta), ("gd", 42, 0.03, delta),
                                                 ("muon", 42, 0.1, delta)], threads=1)
    own = runner.run_batch(same, arms[same], [("gd", 42, 0.03, delta)], threads=1)[0]
    assert own["provenance"]["settings"] == zoo[1]["provenance"]["settings"]
    assert [own[k] for k in (*records.METRICS, "curve", "steps", "status")] == \
        [zoo[1][k] for k in (*records.METRICS, "curve", "steps", "status")]
