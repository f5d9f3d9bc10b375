"""App. D.9's GPU problem-size ladder (Table 11; spec: sensing.md §14): its arms as sensing
experiments under the GPU protocol, each arm's lr grids, lr*, and Table 11's cells.

An arm is an ordinary sensing experiment with the GPU protocol's settings (float64, the "gpu" loop,
k = n, m rounded: sensing.gpu), so :func:`runner.run_batch` trains it. What the CPU experiments do
not have is the two-stage seeding: S5 picks lr* on the selection seeds over the whole grid, then
only lr* runs on the extension seeds, and, where the arm asks, every seed runs again at lr* with
every method cosine-decayed (the "cosine-all" arm). Each (arm, method, stage) is one job and one
bundle of run records; lr* is read from the selection bundle, so no job waits on a whole arm.
"""

from __future__ import annotations

import math

import pandas as pd

from ..optim import cards
from . import gpu, select

SELECTION, EXTENSION, COSINE_ALL = "selection", "extension", "cosine_all"
STAGES = (SELECTION, EXTENSION, COSINE_ALL)
DTYPE = "float64"  # the GPU protocol's (§1.5), whatever the device
RULE = "S5"  # mean train < 1e-4 gates (§14.1, §18: not the stricter 1e-7 of one run-time variant)


def scaled(lr: float, n: int, reference: int, exponent: float) -> float:
    """A base-grid lr at size n: lr (n / reference)^exponent, rounded to 12 decimals (§14.2). The
    factors are written as the spec writes them (40/n, sqrt(40/n), sqrt(n/40)), not as powers."""
    factor = {1: n / reference, -1: reference / n, 0.5: math.sqrt(n / reference),
              -0.5: math.sqrt(reference / n)}[exponent]
    return round(lr * factor, 12)


def arms(config: dict) -> dict[str, dict]:
    """Every arm of the ladder by name, as a sensing experiment with its seeds and Table 11's keys."""
    lad = config["ladder"]
    out = {}
    for name, arm in lad["arms"].items():
        n = arm["n"]
        grids = {m: [scaled(lr, n, lad["reference_n"], lad["scaling"][m]) for lr in lad["grids"][m]]
                 for m in arm["methods"]}
        out[name] = {
            "n": n, "rank": arm["rank"], "width": n, "measurements_per_dof": arm["measurements_per_dof"],
            "init": lad["init"], "budget": arm["budget"], "tol": lad["tol"], "check_every": lad["check_every"],
            "early_stop": True, "loop": gpu.LOOP, "decayed": [m for m in lad["decayed"] if m in grids],
            "selection": RULE, "grids": grids, "kind": arm["kind"], "cosine_all": arm["cosine_all"],
            "selection_seeds": list(lad["selection_seeds"]),
            "extension_seeds": list(lad["extension_seeds"][: arm["extension"]]),
        }
    return out


def problems(get):
    """(key, message) for each arm that cannot run: a method without a base grid or a scaling
    exponent, or an extension seed that is also a selection seed (two records of one run).
    ``get``: a key path's value (core.config.cross_field_errors)."""
    lad = get("ladder") if isinstance(get("ladder"), dict) else {}
    for name, arm in (lad.get("arms") or {}).items():
        for method in arm.get("methods", []) if isinstance(arm, dict) else []:
            for key in ("grids", "scaling"):
                if method not in lad.get(key, {}):
                    yield f"ladder/{key}", f"arm {name} runs {method}, which has no entry here"
    both = set(lad.get("selection_seeds", [])) & set(lad.get("extension_seeds", []))
    if both:
        yield "ladder/extension_seeds", f"{sorted(both)} are selection seeds too; an extension seed runs at lr* only"


def experiment_name(arm: str, exp: dict, stage: str) -> str:
    """The run records' experiment: the cosine-all reruns are another experiment of the arm. An arm
    of another family in this form (sensing.phase_fine, sensing.dial_gpu) names its own."""
    base = exp.get("experiment", f"ladder_{arm}")
    return f"{base}_{COSINE_ALL}" if stage == COSINE_ALL else base


def stage_settings(exp: dict, stage: str) -> dict:
    """The experiment a stage runs: the arm's, or for cosine-all every method decayed."""
    return {**exp, "decayed": list(exp["grids"])} if stage == COSINE_ALL else exp


RUN_KEYS = ("n", "rank", "width", "measurements_per_dof", "init", "budget", "tol", "check_every", "early_stop", "loop",
            "tail")  # tail: the phase diagram's fine grid (phase_fine), whose arms are in this form too


def bundle_identity(arm: str, exp: dict, method: str, stage: str) -> tuple[dict, dict]:
    """What a stage's bundle is and every setting its runs depend on (records.write_bundle): the
    testbed and loop, the method's grid and schedule (not the other methods'), and the seeds its
    cells come from (a later stage's lr* comes from the selection seeds). The device is not one
    (the records say it), nor are the table's keys (kind, cosine_all)."""
    run = stage_settings(exp, stage)
    seeds = run["selection_seeds"] + ([] if stage == SELECTION else run["extension_seeds"])
    settings = {k: run[k] for k in RUN_KEYS if k in run}
    settings |= {"grid": run["grids"][method], "decayed": method in run["decayed"], "selection": RULE, "seeds": seeds,
                 "dtype": DTYPE}
    return {"experiment": experiment_name(arm, exp, stage), "method": method, "stage": stage}, settings


def stages(exp: dict) -> list[str]:
    """The stages an arm runs: the selection, the extension if it has extension seeds, cosine-all if asked."""
    return [SELECTION] + ([EXTENSION] if exp["extension_seeds"] else []) + ([COSINE_ALL] if exp["cosine_all"] else [])


def lr_star(selection: list[dict], exp: dict, method: str) -> tuple[float, bool]:
    """S5's lr* over the selection seeds' runs of ``method`` and whether it is an EDGE of its grid
    (its smallest or largest value, §14.1); NaN where no lr has a finite mean rec and train."""
    grid = exp["grids"][method]
    summary = select.summary(selection, {method: grid}, RULE, exp["tol"])
    chosen = summary[summary["selected"]]
    if not len(chosen):
        return math.nan, False
    lr = float(chosen["lr"].iloc[0])
    return lr, lr in (grid[0], grid[-1])


def stage_cells(stage: str, exp: dict, method: str, selection: list[dict] | None = None) -> list[tuple]:
    """The (method, seed, lr, perturbation) cells of one stage; the later stages need the
    selection's runs for lr* and have none where it is NaN."""
    if stage == SELECTION:
        return [(method, seed, lr, 0.0) for lr in exp["grids"][method] for seed in exp["selection_seeds"]]
    lr, _ = lr_star(selection or [], exp, method)
    if not math.isfinite(lr):
        return []
    seeds = exp["extension_seeds"] if stage == EXTENSION else exp["selection_seeds"] + exp["extension_seeds"]
    return [(method, seed, lr, 0.0) for seed in seeds]


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else math.nan  # a NaN seed makes it NaN (§5)


def _worst(values: list[float]) -> float:
    """The max over seeds, NaN where any seed's is (Python's max would depend on the order)."""
    return math.nan if not values or any(math.isnan(v) for v in values) else max(values)


def cells(arms: dict[str, dict], runs: dict[tuple[str, str, str], list[dict]]) -> list[dict]:
    """Table 11's cells in its order (arms, then each arm's methods) from every bundle's runs,
    keyed (arm, method, stage)."""
    return [cell(arm, exp, method, {stage: runs[(arm, method, stage)] for stage in stages(exp)})
            for arm, exp in arms.items() for method in exp["grids"]]


def cell(arm: str, exp: dict, method: str, runs: dict[str, list[dict]]) -> dict:
    """Table 11's cell of one (arm, method) (§14.4) from its stages' run records: lr* and EDGE;
    rec as mean and population sd over every seed at lr*; mean erank; the cosine-all rec at lr*
    (NaN: not run); the worst and mean train; the seeds; the GPU statuses' counts."""
    lr, edge = lr_star(runs[SELECTION], exp, method)
    at = [r for r in runs[SELECTION] if r["lr"] == lr] + runs.get(EXTENSION, [])
    recs = [r["rec"] for r in at]
    mean = _mean(recs)
    sd = math.sqrt(_mean([(x - mean) ** 2 for x in recs])) if recs else math.nan
    cosine = [r["rec"] for r in runs.get(COSINE_ALL, [])]
    return {"arm": arm, "kind": exp["kind"], "n": exp["n"], "rank": exp["rank"],
            "mdof": exp["measurements_per_dof"], "budget": exp["budget"], "method": method,
            "class": cards.klass(method), "lr": lr, "edge": edge, "rec": mean, "rec_sd": sd,
            "erank": _mean([r["erank"] for r in at]), "cosine_all_rec": _mean(cosine),
            "worst_train": _worst([r["train"] for r in at]), "train": _mean([r["train"] for r in at]),
            "seeds": len(at), "statuses": gpu.status_counts(at, exp["tol"], select.LOOSE_GATE)}


def table11(cells: list[dict]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 11's cells and, per arm, the split check (§14.4): CLEAN if every equivariant method's
    mean rec is below every coordinate-wise one's, else OVERLAP; ScaledGD (class ctrl) takes no part."""
    table = pd.DataFrame(cells)
    splits = []
    for arm, rows in table.groupby("arm", sort=False):
        split = select.clean_split_from_values(zip(rows["method"], rows["rec"]))
        first = rows.iloc[0]
        splits.append({"arm": arm, "kind": first["kind"], "n": first["n"], "rank": first["rank"],
                       "mdof": first["mdof"], "split": split["verdict"], "eq_max": split["eq_max"],
                       "cw_min": split["cw_min"]})
    return table, pd.DataFrame(splits, columns=["arm", "kind", "n", "rank", "mdof", "split", "eq_max", "cw_min"])
