"""From a resolved experiment config to run records: the one entry point that scripts, the
command line and tests share."""

from __future__ import annotations

import torch

from .. import optim
from ..core import progress, records, runtime
from . import gpu, loop, testbed


def problem_size(exp: dict) -> dict:
    """The testbed sizes an experiment config implies, including the derived m."""
    count = gpu.measurements if exp.get("loop") == gpu.LOOP else testbed.measurements  # rounds / truncates
    m = count(exp["n"], exp["rank"], exp["measurements_per_dof"])
    return {"n": exp["n"], "rank": exp["rank"], "width": exp["width"], "m": m, **_tail(exp)}


def _tail(exp: dict) -> dict:
    """The spectral tail's amplitude where the target has one (Section 8); nothing otherwise, so the
    settings of every plain-target run stay as they are."""
    return {} if exp.get("tail") is None else {"tail": float(exp["tail"])}


def prepare(exp: dict, seed: int, dtype: str, device: torch.device):
    """Instance and initial factors of one seed. Draws are float32 on the CPU (spec §1.2-1.5);
    float64 runs cast them and recompute y after the cast."""
    size = problem_size(exp)
    if exp.get("tail") is None:
        inst = testbed.make_instance(size["n"], size["rank"], size["m"], seed)
    else:  # Section 8's spectral-tail target
        inst = testbed.make_tail_instance(size["n"], size["rank"], size["m"], seed, exp["tail"])
    u0, v0 = testbed.init_factors(size["n"], size["width"], exp["init"], seed)
    target = runtime.resolve_dtype(dtype)
    if target != torch.float32 or device.type != "cpu":
        a, x = inst.A.to(device, target), inst.X.to(device, target)
        inst = testbed.Instance(A=a, y=a @ x.reshape(-1), X=x)
        u0, v0 = u0.to(device, target), v0.to(device, target)
    return inst, u0, v0


Cell = tuple[str, int, float, float]  # method, seed, lr, perturbation of U0


def run_batch(experiment: str, exp: dict, cells: list[Cell], *, rules: dict[str, optim.Rule] | None = None,
              dtype: str = "float32", device: str = "cpu", threads: int | None = None, observe=None,
              observe_every: int = 0, arms: dict[int, tuple[str, dict]] | None = None,
              prefixes: dict[int, tuple[str, dict]] | None = None) -> list[dict]:
    """Train every (method, seed, lr, perturbation) cell as one batch; return the records.

    ``rules`` maps a method label to its rule (default: the registry's rule of that name; the
    dial passes its Adam-p variants). The seeds' instances are stacked and all methods share the
    product with A; a run's numbers do not depend on the other runs of its batch
    (testbed.Layout), so any grouping of cells into jobs gives the same records. ``observe`` and
    ``observe_every``: loop.train's diagnostics hook. ``arms`` maps a cell (by position) to the
    experiment (name, settings) whose run it is, where that is not ``experiment``: one whose runs
    differ from its only in their early stop (:func:`host_problem`). ``prefixes`` maps a cell to
    another experiment whose run of the same method, lr and seed is the cell's first steps
    (:func:`prefix_budget`); their records follow the cells', in the order of ``prefixes``.
    """
    dev = runtime.configure(threads=threads, device=device)
    rules = dict(rules or {})
    for method in dict.fromkeys(c[0] for c in cells):
        if method not in rules:
            rules[method] = optim.make(method)  # an unknown name fails, listing the known ones
    arm = [(experiment, exp)] * len(cells)
    for i, (name, other) in (arms or {}).items():
        problem = host_problem(exp, other, cells[i][0], dtype)
        if problem:
            raise ValueError(f"{name}'s {cells[i][0]} runs cannot join {experiment}'s batch: {problem}")
        arm[i] = (name, other)
    prefixes = dict(prefixes or {})
    shorter = [None] * len(cells)
    for i, (name, other) in prefixes.items():
        shorter[i] = prefix_budget(arm[i][1], other, cells[i][0], dtype)
        if shorter[i] is None:
            raise ValueError(f"{name}'s {cells[i][0]} runs are not the first steps of {arm[i][0]}'s")
    seeds = list(dict.fromkeys(c[1] for c in cells))
    prepared = {seed: prepare(exp, seed, dtype, dev) for seed in seeds}
    inst = testbed.stack([prepared[seed][0] for seed in seeds])
    results = loop.train(
        inst, [rules[m] for m, _, _, _ in cells], [float(lr) for _, _, lr, _ in cells],
        torch.stack([prepared[seed][1] for _, seed, _, _ in cells]),
        torch.stack([prepared[seed][2] for _, seed, _, _ in cells]),
        budget=exp["budget"], decayed=[schedule(a, m) != "const" for (m, *_), (_, a) in zip(cells, arm)],
        tol=exp["tol"], check_every=exp["check_every"], perturbations=[d for _, _, _, d in cells],
        which=[seeds.index(seed) for _, seed, _, _ in cells], loop=_loop(exp)[0],
        early_stop=[_loop(a)[1] for _, a in arm], anneal=exp.get("anneal", "cosine"),
        progress=progress.Progress(experiment, len(cells), exp["budget"]),
        observe=observe, observe_every=observe_every, prefixes=shorter)
    env = runtime.environment(dtype, dev)
    out = [_record(*a, m, seed, r, dtype, dev, env) for (m, seed, _, _), a, r in zip(cells, arm, results)]
    return out + [_record(name, other, cells[i][0], cells[i][1], results[i].prefix, dtype, dev, env)
                  for i, (name, other) in prefixes.items()]


def host_problem(exp: dict, other: dict, method: str, dtype: str) -> str | None:
    """Why ``other``'s runs of ``method`` cannot be trained in a batch of ``exp``'s (the same
    instances, loop, budget, checks and anneal; a run's own early stop): the first setting that
    differs; None when they can."""
    mine, theirs = run_settings(exp, method, dtype), run_settings(other, method, dtype)
    keys = dict.fromkeys([*mine, *theirs])
    differ = [key for key in keys if key != "early_stop" and theirs.get(key) != mine.get(key)]
    return f"its {differ[0]} differs" if differ else None


_UNRECORDED = ("testbed", "measurements_per_dof")  # a record's config gives m instead


def _record(experiment: str, exp: dict, method: str, seed: int, r: loop.RunResult, dtype: str,
            dev: torch.device, env: dict) -> dict:
    """A run record (run.schema.json) of one result: its config is the problem size and the run
    settings but the testbed, with the device."""
    settings = run_settings(exp, method, dtype)
    config = {**problem_size(exp), **{k: v for k, v in settings.items() if k not in _UNRECORDED}, "device": str(dev)}
    return {
        "schema": records.SCHEMA, "experiment": experiment, "method": method, "lr": r.lr,
        "seed": seed, "perturbation": r.perturbation, "status": r.status, "steps": r.steps,
        "train": r.train, "rec": r.rec, "erank": r.erank, "nuc": r.nuc, "bal": r.bal,
        "curve": {"step": r.curve_steps, "loss": r.curve_loss},
        "config": config,
        "environment": env,
        "provenance": provenance(experiment, exp, method, r.lr, seed, r.perturbation, dtype),
    }


def prefix_budget(exp: dict, other: dict, method: str, dtype: str) -> int | None:
    """The budget of ``other``'s runs of ``method`` if each is the first steps of ``exp``'s run of
    the same lr and seed: every setting the same but the budget and early stop, which ``other``'s
    runs have, and a budget that makes them a prefix (loop.prefix_problem); otherwise None."""
    mine, theirs = run_settings(exp, method, dtype), run_settings(other, method, dtype)
    if not theirs["early_stop"] or {**theirs, "budget": mine["budget"], "early_stop": mine["early_stop"]} != mine:
        return None
    if loop.prefix_problem(theirs["budget"], mine["budget"], mine["schedule"] != "const", mine["check_every"],
                           mine["early_stop"], mine["loop"]):
        return None
    return theirs["budget"]


def run_settings(exp: dict, method: str, dtype: str) -> dict:
    """Every setting of an experiment that determines one method's runs (the other methods' grids,
    the selection rule and the device do not)."""
    keys = ("n", "rank", "width", "measurements_per_dof", "init", "budget", "tol", "check_every")
    loop_name, early_stop = _loop(exp)
    return {"testbed": "sensing", **{k: exp[k] for k in keys}, **_tail(exp), "loop": loop_name,
            "early_stop": early_stop, "dtype": dtype, "schedule": schedule(exp, method)}


def _loop(exp: dict) -> tuple[str, bool]:
    """An experiment's run loop and whether its runs stop early (default: the canonical loop, with)."""
    return exp.get("loop", "canonical"), exp.get("early_stop", True)


def schedule(exp: dict, method: str) -> str:
    """A method's lr schedule in an experiment: "const", or its anneal ("cosine" unless the
    experiment says "linear")."""
    return exp.get("anneal", "cosine") if method in exp.get("decayed", []) else "const"


def provenance(experiment: str, exp: dict, method: str, lr: float, seed: int, perturbation: float,
               dtype: str) -> dict:
    """A run record's provenance (records.provenance): the workflow computes the same to check a
    record it finds at the run's path."""
    what = {"experiment": experiment, "method": method, "lr": float(lr), "seed": int(seed),
            "perturbation": float(perturbation)}
    return records.provenance(what, run_settings(exp, method, dtype))


def run_cells(experiment: str, exp: dict, method: str, seed: int, lrs: list[float], *,
              perturbations: list[float] | None = None, **kw) -> list[dict]:
    """One method on one seed at every lr (optionally perturbed): :func:`run_batch` on those cells."""
    deltas = perturbations if perturbations is not None else [0.0] * len(lrs)
    return run_batch(experiment, exp, [(method, seed, lr, d) for lr, d in zip(lrs, deltas)], **kw)
