"""Section 5's controls (spec: sensing.md §10, App. D.1, D.2, D.4, D.7): their arms as sensing
experiments, and the extraction of each control from its runs' records.

Every control runs on the zoo's testbed and protocol (sizes, budget, tol, init, checks) and
changes only what its section says: the second size its instance, the init-scale control the
factor scale, the decay control who is decayed and whether runs stop early. Each arm is an
ordinary sensing experiment, so the zoo's per-seed jobs, engine and records serve it unchanged.
"""

from __future__ import annotations

import math

import pandas as pd

from ..optim import cards
from . import phase, select, signum_audit
from .names import value_tag

SCHEDULE_MODES = {"const": "schedule_const", "decay": "schedule_decay", "decay-full": "schedule_decay_full"}
RMSPROP_MODE, RMSPROP_ARM = "const-60k", "schedule_rmsprop_const"
SELECTIONS = {"rec-sel": "S3a", "spd-sel": "S3b"}
SPLIT_MODES = ("const", "decay")  # the midpoint count's modes (§10.4)


def init_arm(init: float) -> str:
    return f"init_scale_{value_tag(init)}"


def _arm(zoo: dict, grids: dict, **changes) -> dict:
    """A sensing experiment on the zoo's testbed and protocol with ``changes`` applied."""
    return {**zoo, "early_stop": True, **changes, "grids": grids}


def schedule_arms(config: dict) -> dict[str, dict]:
    """The decay control's arms (§10.4): the zoo's grids with nobody decayed (const), everyone
    decayed (decay), everyone decayed without early stop (decay-full, its methods only), and
    RMSProp at a constant lr on the longer budget. Selection S3a; S3b is applied by :func:`schedule`."""
    zoo, settings = config["zoo"], config["schedule_control"]
    grids = zoo["grids"]
    everyone = list(grids)
    full = {m: grids[m] for m in settings["full_methods"] if m in grids}
    arms = {
        SCHEDULE_MODES["const"]: _arm(zoo, dict(grids), decayed=[], selection="S3a"),
        SCHEDULE_MODES["decay"]: _arm(zoo, dict(grids), decayed=everyone, selection="S3a"),
    }
    if full:
        arms[SCHEDULE_MODES["decay-full"]] = _arm(zoo, full, decayed=everyone, early_stop=False, selection="S3a")
    if cards.RMSPROP in grids:
        arms[RMSPROP_ARM] = _arm(zoo, {cards.RMSPROP: grids[cards.RMSPROP]}, decayed=[], selection="S3a",
                                 budget=settings["rmsprop_budget"])
    return arms


def schedule_arm_names(experiments: dict[str, dict]) -> dict[str, str]:
    """Mode of the decay control -> the name of its sensing experiment, for the arms present."""
    arms = {**SCHEDULE_MODES, RMSPROP_MODE: RMSPROP_ARM}
    return {mode: arm for mode, arm in arms.items() if arm in experiments}


def sensing_experiments(config: dict) -> dict[str, dict]:
    """Every sensing experiment of the workflow by name: the zoo, then each control's arms."""
    zoo = config["zoo"]
    size, init, lrs = config["second_size"], config["init_scale"], config["lr_sensitivity"]
    out = {"zoo": zoo}
    out["second_size"] = _arm(zoo, size["grids"], n=size["n"], rank=size["rank"], width=size["width"],
                              decayed=size["decayed"], selection="S2")
    for scale in init["inits"]:
        out[init_arm(scale)] = _arm(zoo, init["grids"], init=scale, decayed=init["decayed"], selection="S2")
    out["lr_sensitivity"] = _arm(zoo, lrs["grids"], decayed=lrs["decayed"], selection="S6")
    out.update(schedule_arms(config))
    out.update(phase.arms(config))  # Section 8, opt-in: its jobs run only for `snakemake section8`
    out.update(signum_audit.arms(config))  # App. D.10, opt-in: `snakemake signum_audit`
    return out


def selected(summary: pd.DataFrame) -> pd.DataFrame:
    return summary[summary["selected"]].set_index("method")


def init_scale(summaries: dict[float, pd.DataFrame], zoo_summary: pd.DataFrame, zoo_init: float,
               tol: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """App. D.4: the S2-selected row per (init, method), and per init the weak check
    max(eq rec) < rec_Adam (HOLDS/FAILS, §8.4) and the primary split over its methods.

    At the zoo's own init the rows should coincide with Table 2's (same instances; Table 2's lr*
    lies in each grid): ``as_table2`` says whether lr and rec agree there (NaN elsewhere)."""
    table2 = selected(zoo_summary)
    rows, checks = [], []
    for scale, summary in summaries.items():
        chosen = selected(summary)
        for method, r in chosen.iterrows():
            same = math.nan
            if scale == zoo_init and method in table2.index:
                ref = table2.loc[method]
                same = bool(r["lr"] == ref["lr"] and abs(r["rec"] - ref["rec"]) < 1e-12)
            rows.append({"init": scale, "method": method, "class": select.klass(method), "lr": r["lr"],
                         "rec": r["rec"], "erank": r["erank"], "train": r["train"],
                         "interpolates": bool(r["train"] < tol), "as_table2": same})
        eq = [v for m, v in chosen["rec"].items() if select.klass(m) == "eq" and math.isfinite(v)]
        adam = chosen["rec"].get(cards.ADAM, math.nan)
        weak = "HOLDS" if eq and math.isfinite(adam) and max(eq) < adam else "FAILS"
        split = select.clean_split(chosen.reset_index())
        checks.append({"init": scale, "eq_max": max(eq) if eq else math.nan, "adam_rec": adam,
                       "weak_check": weak, "split": split["verdict"], "gap": split["gap"]})
    return pd.DataFrame(rows), pd.DataFrame(checks)


def flow_limit(cells: pd.DataFrame, method: str, grid: list[float], tol: float) -> float | None:
    """App. D.2's flow-limit lr: the first of the ascending grid whose mean train < tol (cells
    indexed by method and lr); None if none interpolates."""
    return next((lr for lr in grid if cells.loc[(method, lr), "train"] < tol), None)


def lr_sensitivity(summary: pd.DataFrame, grids: dict[str, list[float]], tol: float) -> pd.DataFrame:
    """App. D.2 (S6): every (method, lr) with mean rec and its population sd over seeds, erank,
    train and steps; the flow-limit row of each method is its smallest lr whose mean train < tol
    (none: "never interpolated")."""
    cells = summary.set_index(["method", "lr"])
    rows = []
    for method, grid in grids.items():
        flow = flow_limit(cells, method, grid, tol)
        for lr in grid:
            c = cells.loc[(method, lr)]
            rows.append({"method": method, "lr": lr, "rec": c["rec"], "rec_sd": c["rec_sd"], "erank": c["erank"],
                         "train": c["train"], "steps": c["steps"], "flow_limit": lr == flow,
                         "note": "never interpolated on this grid" if flow is None else ""})
    return pd.DataFrame(rows)


def schedule(runs: dict[str, pd.DataFrame], grids: dict[str, dict], tol: float) -> pd.DataFrame:
    """Table 6: every cell of every mode scored by both rules, S3a (rec-sel) and S3b (spd-sel).

    ``runs`` maps a mode (const, decay, decay-full, const-60k) to its per-run frame and
    ``grids`` to its grids. A selected row whose mean train misses the bar is a ``floor``: it was
    chosen from the fallback pool, and is a floor of that method, not evidence of its bias."""
    parts = []
    for mode, frame in runs.items():
        cells = select.aggregate(frame)
        for rule, name in SELECTIONS.items():
            scored = select.select(cells, grids[mode], name, tol)
            scored.insert(0, "rule", rule)
            scored.insert(0, "mode", mode)
            scored["floor"] = scored["selected"] & ~(scored["train"] < tol)
            parts.append(scored)
    return pd.concat(parts, ignore_index=True)


def chosen_rows(table: pd.DataFrame, mode: str, rule: str) -> pd.DataFrame:
    return table[(table["mode"] == mode) & (table["rule"] == rule) & table["selected"]]


def midpoint_counts(table: pd.DataFrame) -> pd.DataFrame:
    """§8.2 on {const, decay} x {rec-sel, spd-sel}: matches against ½(rec_GD + rec_Adam)."""
    rows = []
    for mode in SPLIT_MODES:
        for rule in SELECTIONS:
            chosen = chosen_rows(table, mode, rule)
            by = chosen.set_index("method")["rec"]
            count = select.midpoint_split(chosen)
            rows.append({"mode": mode, "rule": rule, "rec_gd": by.get(cards.GD, math.nan),
                         "rec_adam": by.get(cards.ADAM, math.nan), **count})
    return pd.DataFrame(rows)


def deltas(table: pd.DataFrame) -> pd.DataFrame:
    """The optional printed deltas of §10.4 (rec-sel rows): later minus earlier recovery."""
    def rec(mode: str, method: str) -> float:
        hit = chosen_rows(table, mode, "rec-sel")
        hit = hit[hit["method"] == method]
        return float(hit["rec"].iloc[0]) if len(hit) else math.nan

    pairs = [(cards.ADAM, "const", cards.ADAM, "decay"), (cards.ADAM, "const", cards.ADAM, "decay-full"),
             (cards.GD, "const", cards.GD, "decay"), (cards.GD, "const", cards.GD, "decay-full"),
             (cards.GD, "decay-full", cards.MUON, "decay"), (cards.MUON, "const", cards.MUON, "decay")]
    return pd.DataFrame([{"from": f"{m1} ({mode1})", "to": f"{m2} ({mode2})", "delta": rec(mode2, m2) - rec(mode1, m1)}
                         for m1, mode1, m2, mode2 in pairs])


def classification(zoo_summary: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """The three counts of §8 with the numbers they rest on: the primary clean split (Table 2),
    the midpoint count under one shared cosine decay (decay, rec-sel) and the rank split."""
    zoo = zoo_summary[zoo_summary["selected"]]
    split, rank = select.clean_split(zoo), select.rank_split(zoo)
    decay = chosen_rows(table, "decay", "rec-sel")
    mid = select.midpoint_split(decay)
    by_zoo, by_decay = zoo.set_index("method"), decay.set_index("method")
    get = lambda frame, method, q: float(frame.loc[method, q]) if method in frame.index else math.nan
    return pd.DataFrame([
        {"form": "clean split (Table 2, S1)", "correct": split["correct"], "total": split["total"],
         "verdict": split["verdict"], "threshold": math.nan,
         "rests_on": f"eq_max {split['eq_max']:.4f}, cw_min {split['cw_min']:.4f}, gap {split['gap']:.4f}"},
        {"form": "midpoint (decay mode, rec-sel)", "correct": mid["correct"], "total": mid["total"],
         "verdict": "", "threshold": mid["threshold"],
         "rests_on": f"rec_GD {get(by_decay, cards.GD, 'rec'):.4f}, rec_Adam {get(by_decay, cards.ADAM, 'rec'):.4f}"},
        {"form": "rank split (Table 2 erank)", "correct": rank["correct"], "total": rank["total"],
         "verdict": "", "threshold": rank["threshold"],
         "rests_on": f"erank_GD {get(by_zoo, cards.GD, 'erank'):.2f}, "
                     f"erank_Adam {get(by_zoo, cards.ADAM, 'erank'):.2f}"},
    ])


def nuclear_summary(recs: list[dict]) -> pd.DataFrame:
    """The convex reference per seed, then their mean (the Table 2 row)."""
    cols = ["seed", "rec", "erank", "nuc", "nuc_truth", "feasibility", "iterations", "primal_residual",
            "converged"]
    per_seed = pd.DataFrame([{c: r[c] for c in cols} for r in recs], columns=cols)
    mean = {"seed": "mean", "rec": per_seed["rec"].mean(), "erank": per_seed["erank"].mean(),
            "nuc": per_seed["nuc"].mean(), "nuc_truth": per_seed["nuc_truth"].mean(),
            "feasibility": per_seed["feasibility"].max(), "iterations": per_seed["iterations"].max(),
            "primal_residual": per_seed["primal_residual"].max(), "converged": bool(per_seed["converged"].all())}
    return pd.concat([per_seed.astype({"seed": object}), pd.DataFrame([mean])], ignore_index=True)


def run_keys(exp: dict, seeds: list[int], dtype: str) -> list[tuple]:
    """Each run of an experiment as what determines its numbers, (method, lr, seed, settings
    digest: runner.run_settings, records.settings_digest), in the workflow's order (grid order,
    then seed)."""
    from . import runner
    from ..core import records

    keys = []
    for method, grid in exp["grids"].items():
        digest = records.settings_digest(runner.run_settings(exp, method, dtype))
        keys += [(method, float(lr), int(seed), digest) for lr in grid for seed in seeds]
    return keys


def record_key(rec: dict) -> tuple:
    """A run record's :func:`run_keys` entry, from what the record says of itself."""
    return rec["method"], float(rec["lr"]), int(rec["seed"]), rec["provenance"]["settings"]


def run_sources(experiments: dict[str, dict], seeds: list[int], dtype: str) -> dict[tuple, str]:
    """Which experiment's record serves each run (experiment, method, lr, seed): the first one,
    in the order given (the zoo first), that has the same run (:func:`run_keys`), so a control
    arm's run that the zoo already makes (e.g. the init-scale control at the zoo's init) is that
    record, not a second run."""
    first: dict[tuple, str] = {}
    return {(name, *key[:3]): first.setdefault(key, name)
            for name, exp in experiments.items() for key in run_keys(exp, seeds, dtype)}


def run_prefixes(experiments: dict[str, dict], sources: dict[tuple, str], dtype: str) -> dict[tuple, str]:
    """Which experiment's training writes each run (experiment, method, lr, seed) that is the first
    steps of another one's run of the same method, lr and seed (runner.prefix_budget): that longer
    run's experiment. ``experiments``: arms always asked for together (the workflow passes the decay
    control's, which Table 6 reads as one). Only each experiment's own runs (``sources``) take part,
    a longer run gives one shorter run at most, and a shorter run is never itself a longer one."""
    from . import runner

    own = [key for key, src in sources.items() if src == key[0] and key[0] in experiments]
    out: dict[tuple, str] = {}
    longer: set[tuple] = set()
    for short in own:
        name, method, lr, seed = short
        for other in experiments:
            cell = (other, method, lr, seed)
            if other == name or cell not in own or cell in longer or cell in out or short in longer:
                continue
            if runner.prefix_budget(experiments[other], experiments[name], method, dtype) is not None:
                out[short] = other
                longer.add(cell)
                break
    return out


def run_hosts(experiments: dict[str, dict], sources: dict[tuple, str], dtype: str, host: str) -> dict[tuple, str]:
    """Which runs (experiment, method, lr, seed) of other arms ``host``'s training jobs train: an
    arm's own run (``sources``) whose first steps are the host's own run of the same method, lr and
    seed at the same budget (runner.prefix_budget; a decayed run without early stop, the decay-full
    mode's Muon inside the zoo's). The host's job trains the longer run in place of its own and
    writes both records, so the host's target waits on no job of the arm's."""
    from . import runner

    out: dict[tuple, str] = {}
    for key, source in sources.items():
        name, method, lr, seed = key
        if source != name or name == host or name not in experiments or sources.get((host, method, lr, seed)) != host:
            continue
        if runner.prefix_budget(experiments[name], experiments[host], method, dtype) == experiments[name]["budget"]:
            out[key] = host
    return out


def reruns_made(cells: list[tuple], runs: list[dict], made: list[dict]) -> dict[int, dict]:
    """The perturbed reruns among ``cells`` (method, seed, lr, perturbation) that another
    experiment's bundles already hold, by position in ``cells``: a member of ``made`` (stored
    bundle members) of the same run as the cell's record among ``runs`` (:func:`record_key`: the
    settings digest too), the same perturbation and the same numerics mode. A rerun is made once,
    like a run (:func:`run_sources`): an arm whose runs are the zoo's takes the zoo's reruns of them."""
    if not made:
        return {}

    def key(rec: dict, perturbation: float) -> tuple:
        return record_key(rec), float(perturbation), rec["provenance"]["numerics"]

    found = {key(r, r["perturbation"]): r for r in made}
    base = {record_key(r)[:3]: r for r in runs}
    wanted = [key(base[(method, float(lr), int(seed))], delta) for method, seed, lr, delta in cells]
    return {i: found[k] for i, k in enumerate(wanted) if k in found}


def rerun(experiment: str, exp: dict, cells: list[tuple], runs: list[dict], made: list[dict],
          **kw) -> tuple[list[dict], int]:
    """The perturbed reruns of ``cells``, in order: those ``made`` already holds
    (:func:`reruns_made`), the others trained as one batch (runner.run_batch, given ``kw``); and
    how many were taken. Torch is imported only if some cell is left to train."""
    taken = reruns_made(cells, runs, made)
    todo = [cell for i, cell in enumerate(cells) if i not in taken]
    fresh = []
    if todo:
        from . import runner

        fresh = runner.run_batch(experiment, exp, todo, **kw)
    fresh = iter(fresh)
    return [taken[i] if i in taken else next(fresh) for i in range(len(cells))], len(taken)


def experiment_records(paths: list[str], exp: dict, seeds: list[int], dtype: str, *,
                       only: bool = False) -> list[dict]:
    """An experiment's runs among the records at ``paths``, in the workflow's order, each found by
    its :func:`run_keys` entry (a control's run that the zoo makes is the zoo's record). Records
    of other runs are passed over, or with ``only`` refused (a summary reads one experiment's runs
    and nothing else). A missing run, or with ``only`` another one, is a RecordError."""
    from ..core import records

    wanted: dict[tuple, dict | None] = dict.fromkeys(run_keys(exp, seeds, dtype))
    for path in paths:
        rec = records.read(path)
        key = record_key(rec)
        if key in wanted and rec["perturbation"] == 0:
            wanted[key] = rec
        elif only:
            raise records.RecordError(f"{path}: {key[0]} lr {key[1]:g} seed {key[2]} (perturbation "
                                      f"{rec['perturbation']:g}) is not one of the experiment's runs "
                                      f"made with the settings it asks for")
    missing = [key for key, rec in wanted.items() if rec is None]
    if missing:
        method, lr, seed, _ = missing[0]
        raise records.RecordError(f"{len(missing)} of the experiment's {len(wanted)} runs have no record made "
                                  f"with the settings it asks for (first: {method} lr {lr:g} seed {seed})")
    return list(wanted.values())
