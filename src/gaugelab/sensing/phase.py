"""Section 8's Muon spectral-tail phase diagram (spec: sensing.md §13.1-13.2, App. D.1): its arms
as sensing experiments, and the phase table, the crossing tau* and the schedule control read from
their summaries.

The target is a planted rank-3 head plus a tail of amplitude tau (testbed.make_tail_instance);
everything else is the zoo's testbed and protocol, selection S5. Per tau, three arms: the coarse
grid (Muon decayed, the others constant), and for the schedule control every method constant and
every method decayed. A run two arms share (e.g. GD at a constant lr) is made once
(controls.run_sources).
"""

from __future__ import annotations

import math

import pandas as pd

from ..optim import cards
from .names import value_tag

COARSE, CONST, DECAY = "coarse", "const", "decay"
METHODS = (cards.GD, cards.ADAM, cards.MUON, cards.SHAMPOO)


def arm_name(mode: str, tau: float) -> str:
    return f"phase_{mode}_tau{value_tag(tau)}"


def arms(config: dict) -> dict[str, dict]:
    """Every arm of the phase diagram and its schedule control, by name, as sensing experiments."""
    zoo, phase = config["zoo"], config["phase_diagram"]
    grids, decayed_grids = phase["grids"], phase["schedule_grids"]
    out = {}
    for tau in phase["taus"]:
        base = {**zoo, "early_stop": True, "selection": "S5", "strict": False, "tail": float(tau)}
        out[arm_name(COARSE, tau)] = {**base, "grids": dict(grids), "decayed": list(phase["decayed"])}
        out[arm_name(CONST, tau)] = {**base, "grids": dict(grids), "decayed": []}
        out[arm_name(DECAY, tau)] = {**base, "grids": dict(decayed_grids), "decayed": list(decayed_grids)}
    return out


def arm_names(config: dict) -> dict[tuple[str, float], str]:
    """(mode, tau) -> the arm's experiment name."""
    return {(mode, float(tau)): arm_name(mode, tau) for tau in config["phase_diagram"]["taus"]
            for mode in (COARSE, CONST, DECAY)}


def selected(summaries: dict[tuple[str, float], pd.DataFrame]) -> pd.DataFrame:
    """Every arm's S5-selected row per method: mode, tau, method, lr, mean rec, population sd of
    rec over seeds, mean erank, mean train and whether the row passes the gate (train < 1e-4)."""
    rows = []
    for (mode, tau), summary in summaries.items():
        for _, r in summary[summary["selected"]].iterrows():
            rows.append({"mode": mode, "tau": tau, "method": r["method"], "lr": r["lr"], "rec": r["rec"],
                         "rec_sd": r["rec_sd"], "erank": r["erank"], "train": r["train"], "gated": bool(r["gated"])})
    columns = ["mode", "tau", "method", "lr", "rec", "rec_sd", "erank", "train", "gated"]
    return pd.DataFrame(rows, columns=columns).sort_values(["mode", "tau", "method"], ignore_index=True)


def crossings(taus: list[float], d: list[float]) -> list[float]:
    """Walking tau upwards with d(tau) = rec_Muon - rec_GD, every grid point where d(previous) < 0
    <= d(tau): each the first grid point at or beyond a true crossing (§13.1, §13.3)."""
    return [taus[i] for i in range(1, len(taus)) if d[i - 1] < 0 <= d[i]]


def crossing(taus: list[float], d: list[float]) -> float:
    """tau* (§13.1): the first crossing; NaN if none."""
    found = crossings(taus, d)
    return found[0] if found else math.nan


def rec_of(table: pd.DataFrame, mode: str, method: str) -> pd.Series:
    """tau -> the selected mean rec of one method in one arm."""
    hit = table[(table["mode"] == mode) & (table["method"] == method)]
    return hit.set_index("tau")["rec"].sort_index()


def tau_star(table: pd.DataFrame, muon: tuple[str, str] = (COARSE, cards.MUON),
             gd: tuple[str, str] = (COARSE, cards.GD)) -> float:
    """The crossing of Muon's curve with GD's, each given as (arm mode, method)."""
    m, g = rec_of(table, *muon), rec_of(table, *gd)
    taus = sorted(set(m.index) & set(g.index))
    return crossing(taus, [m[t] - g[t] for t in taus])


def phase_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The coarse grid per tau (§13.1): each method's selected rec and erank, the verdict ("Muon"
    if rec_GD - rec_Muon > 0, else "GD") and the train check (every selected row below 1e-4)."""
    coarse = table[table["mode"] == COARSE]
    rows = []
    for tau, group in coarse.groupby("tau"):
        by = group.set_index("method")
        row = {"tau": tau, "tail energy %": 100 * tau * tau}
        for method in METHODS:
            if method in by.index:
                row[f"{method} rec"], row[f"{method} erank"] = by.loc[method, "rec"], by.loc[method, "erank"]
        if {cards.GD, cards.MUON} <= set(by.index):
            row["verdict"] = "Muon" if by.loc[cards.GD, "rec"] - by.loc[cards.MUON, "rec"] > 0 else "GD"
        row["train check"] = "pass" if bool(group["gated"].all()) else "fail"
        rows.append(row)
    return pd.DataFrame(rows)


def _schedule_configs() -> dict[str, tuple[str, str]]:
    """The schedule control's configurations in §13.2's order: label -> (arm mode, method); "+dec"
    marks a decayed one, and Muon, decayed in the protocol, has its constant run as the control."""
    out = {}
    for method in METHODS:
        if method == cards.MUON:
            out.update({f"{method}+dec": (DECAY, method), f"{method} (no decay)": (CONST, method)})
        else:
            out.update({method: (CONST, method), f"{method}+dec": (DECAY, method)})
    return out


SCHEDULE_CONFIGS = _schedule_configs()


def schedule_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The schedule control per configuration and tau: selected lr, mean rec and its population sd;
    an undecayed Muon row that does not pass the gate is a floor, not a bias (§13.2)."""
    rows = []
    for label, (mode, method) in SCHEDULE_CONFIGS.items():
        hit = table[(table["mode"] == mode) & (table["method"] == method)]
        for _, r in hit.sort_values("tau").iterrows():
            rows.append({"config": label, "tau": r["tau"], "lr": r["lr"], "rec": r["rec"], "rec_sd": r["rec_sd"],
                         "train": r["train"], "floor": not r["gated"]})
    return pd.DataFrame(rows, columns=["config", "tau", "lr", "rec", "rec_sd", "train", "floor"])


def schedule_crossings(table: pd.DataFrame) -> dict[str, float]:
    """§13.2's two crossings: muon+dec against gd, and against gd+dec."""
    muon = (DECAY, cards.MUON)
    return {f"{cards.MUON}+dec vs {cards.GD}": tau_star(table, muon, (CONST, cards.GD)),
            f"{cards.MUON}+dec vs {cards.GD}+dec": tau_star(table, muon, (DECAY, cards.GD))}
