"""App. D.9's optional GPU dial arm (spec: sensing.md §14.6): the Adam-p dial of Section 7 under
the GPU protocol, at two sizes, in the GPU port's form of the update (no outer eps, §4).

Each size is an arm in the ladder's form (sensing.ladder: float64, the GPU loop, k = n, m
rounded), its methods the dial's variants (RMS convention; labels as the CPU dial's, p1 for Adam),
each with one grid (the base lrs times sqrt(n / reference_n)). The ladder's training job runs
every lr on every seed of a variant in one stage, so S5 selects over all the seeds of the size.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

from . import dial, gpu, ladder, select

if TYPE_CHECKING:
    from ..optim import Rule

CONVENTION = "rms"  # §14.6: the paper's convention only
SCALING = 0.5  # lrs times sqrt(n / reference_n) (§14.6)


def arm_name(size: str) -> str:
    """A size's arm, which is its run records' experiment too."""
    return f"dial_gpu_{size}"


def arms(config: dict) -> dict[str, dict]:
    """Every size's arm by name, as a ladder arm whose methods are the dial's variants; its seeds
    are all selection seeds (every lr on every seed), and it has neither extension nor cosine-all."""
    arm_config, lad = config["dial_gpu"], config["ladder"]
    out = {}
    for size, spec in arm_config["sizes"].items():
        n = spec["n"]
        grid = [ladder.scaled(lr, n, lad["reference_n"], SCALING) for lr in arm_config["lrs"]]
        out[arm_name(size)] = {
            "experiment": arm_name(size),
            "n": n, "rank": arm_config["rank"], "width": n, "measurements_per_dof": arm_config["measurements_per_dof"],
            "init": lad["init"], "budget": arm_config["budget"], "tol": lad["tol"], "check_every": lad["check_every"],
            "early_stop": True, "loop": gpu.LOOP, "decayed": [], "selection": ladder.RULE,
            "grids": {dial.label(p, CONVENTION): list(grid) for p in arm_config["ps"]}, "kind": "dial_gpu",
            "cosine_all": False, "selection_seeds": list(arm_config["seeds"][: spec["seeds"]]), "extension_seeds": [],
            "ps": {dial.label(p, CONVENTION): float(p) for p in arm_config["ps"]}, "size": size,
        }
    return out


def rules(exp: dict) -> dict[str, Rule] | None:
    """The update rule of each of an arm's variants (the GPU port: no outer eps); None for an arm
    of another family, whose methods are the registry's."""
    if "ps" not in exp:
        return None
    from .. import optim  # here, not at the top: the table reads this module without torch

    return {label: optim.adam_p(p, CONVENTION, outer_eps=False) for label, p in exp["ps"].items()}


def table(arms_: dict[str, dict], runs: dict[tuple[str, str], list[dict]]) -> pd.DataFrame:
    """Per (size, p) in the config's order: lr* by S5 over every seed (EDGE: its grid's smallest
    or largest value), rec as mean and population sd over the seeds at lr*, mean erank, int(mean
    steps) truncated (§5), whether the gate passed, and the runs' GPU statuses. ``runs``: (arm,
    variant) -> its selection bundle's records."""
    rows = []
    for arm, exp in arms_.items():
        for label, p in exp["ps"].items():
            recs, grid = runs[(arm, label)], exp["grids"][label]
            summary = select.summary(recs, {label: grid}, ladder.RULE, exp["tol"])
            chosen = summary[summary["selected"]]
            row = {"size": exp["size"], "n": exp["n"], "p": p, "variant": label}
            if not len(chosen):  # every lr's mean rec or train is NaN
                rows.append(row | {"lr": math.nan, "edge": False, "rec": math.nan, "rec_sd": math.nan,
                                   "erank": math.nan, "steps": math.nan, "gated": False, "seeds": 0, "statuses": ""})
                continue
            cell = chosen.iloc[0]
            at = [r for r in recs if r["lr"] == cell["lr"]]
            rows.append(row | {
                "lr": float(cell["lr"]), "edge": float(cell["lr"]) in (grid[0], grid[-1]), "rec": cell["rec"],
                "rec_sd": cell["rec_sd"], "erank": cell["erank"], "steps": int(cell["steps"]),
                "gated": bool(cell["gated"]), "seeds": len(at),
                "statuses": gpu.status_counts(at, exp["tol"], select.LOOSE_GATE)})
    return pd.DataFrame(rows)
