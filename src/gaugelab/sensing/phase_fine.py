"""The phase diagram's GPU fine grid (App. D.9; spec: sensing.md §13.3, the data of §15.4's
figure): the coarse grid's tail targets under the GPU protocol, at two sizes.

Each (size, tau) is an arm in the ladder's form (sensing.ladder: float64, the GPU loop, k = n, m
rounded, grids scaled with n as the ladder's), run by the ladder's training job in one stage: every
lr on every seed, which is a selection over all the seeds of the cell. What is read from the runs
is the coarse grid's (phase.selected, phase.tau_star), with the size's name as the arm's mode.
"""

from __future__ import annotations

import pandas as pd

from ..optim import cards
from . import gpu, ladder, phase, select
from .names import value_tag


def mode(size: str) -> str:
    """The selected rows' ``mode`` of one size (phase.selected's key beside the coarse grid's)."""
    return f"fine_{size}"


def arm_name(size: str, tau: float) -> str:
    """An arm's name, which is its run records' experiment too."""
    return f"phase_fine_{size}_tau{value_tag(tau)}"


def arms(config: dict) -> dict[str, dict]:
    """Every (size, tau) arm by name, as a ladder arm with the tail amplitude added; its seeds are
    all selection seeds (every lr on every seed), and it has neither extension nor cosine-all."""
    fine, lad, zoo = config["phase_fine"], config["ladder"], config["zoo"]
    out = {}
    for size, spec in fine["sizes"].items():
        n = spec["n"]
        grids = {m: [ladder.scaled(lr, n, lad["reference_n"], lad["scaling"][m]) for lr in grid]
                 for m, grid in fine["grids"].items()}
        for tau in fine["taus"]:
            out[arm_name(size, tau)] = {
                "experiment": arm_name(size, tau),
                "n": n, "rank": zoo["rank"], "width": n, "measurements_per_dof": zoo["measurements_per_dof"],
                "init": lad["init"], "budget": fine["budget"], "tol": lad["tol"], "check_every": lad["check_every"],
                "early_stop": True, "loop": gpu.LOOP, "decayed": [m for m in fine["decayed"] if m in grids],
                "selection": ladder.RULE, "grids": grids, "kind": "phase_fine", "cosine_all": False,
                "selection_seeds": list(fine["seeds"][: spec["seeds"]]), "extension_seeds": [],
                "tail": float(tau), "size": size,
            }
    return out


def problems(get):
    """(key, message) for a figure that cannot be drawn: its size is not a size, or a tail it draws
    is not on the grid. ``get``: a key path's value (core.config.cross_field_errors)."""
    fine = get("phase_fine") if isinstance(get("phase_fine"), dict) else {}
    figure, sizes, taus = fine.get("figure") or {}, fine.get("sizes") or {}, fine.get("taus") or []
    if sizes and figure.get("size") not in sizes:
        yield "phase_fine/figure/size", f"{figure.get('size')!r} is not one of the sizes ({', '.join(sizes)})"
    missing = [t for t in figure.get("taus", []) if t not in taus]
    if taus and missing:
        yield "phase_fine/figure/taus", f"{missing} are not on the grid's taus"


def selected(arms_: dict[str, dict], runs: dict[str, list[dict]]) -> pd.DataFrame:
    """Every arm's S5-selected row per method over all its seeds (phase.selected's columns, mode
    naming the size) from each arm's run records (``runs``: arm -> its methods' records)."""
    summaries = {(mode(exp["size"]), exp["tail"]): select.summary(runs[arm], exp["grids"], ladder.RULE, exp["tol"])
                 for arm, exp in arms_.items()}
    return phase.selected(summaries)


def crossings(table: pd.DataFrame, size: str) -> list[float]:
    """Every crossing of one size, Muon's curve against GD's (§13.3: "tau* ~ x (Muon cedes to GD)"
    for each; there may be none)."""
    m, g = (phase.rec_of(table, mode(size), method) for method in (cards.MUON, cards.GD))
    taus = sorted(set(m.index) & set(g.index))
    return phase.crossings(taus, [m[t] - g[t] for t in taus])


def rows(table: pd.DataFrame) -> pd.DataFrame:
    """The fine grid per size and tau (§13.3): each method's mean rec at lr* and its population
    sd, the better of Muon and GD, and the train check (every selected row below 1e-4)."""
    out = []
    for (arm_mode, tau), group in table[table["mode"].str.startswith("fine_")].groupby(["mode", "tau"], sort=False):
        by = group.set_index("method")
        row = {"size": arm_mode.removeprefix("fine_"), "tau": tau, "tail energy %": 100 * tau * tau}
        for method in by.index:
            row[f"{method} rec"], row[f"{method} sd"] = by.loc[method, "rec"], by.loc[method, "rec_sd"]
        if {cards.GD, cards.MUON} <= set(by.index):
            row["verdict"] = "Muon" if by.loc[cards.GD, "rec"] - by.loc[cards.MUON, "rec"] > 0 else "GD"
        row["train check"] = "pass" if bool(group["gated"].all()) else "fail"
        out.append(row)
    return pd.DataFrame(out)
