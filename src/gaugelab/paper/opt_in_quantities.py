"""The reproduced counterparts of the opt-in targets' published values, beside
:mod:`sensing_quantities`' for Sections 5 and 7: Section 8's crossing tau* (published.SECTION8) and
App. D.10's audit cell (published.SIGNUM_AUDIT)."""

from __future__ import annotations

import math

import pandas as pd

from ..optim import cards
from ..sensing import phase
from .compare import Found
from .published import SIGNUM_AUDIT


def section8(table: pd.DataFrame) -> dict:
    """The coarse grid's tau*, with d(tau) = rec_Muon - rec_GD at every tau in the note
    (``table``: the phase diagram's selected rows, phase.selected)."""
    m, g = phase.rec_of(table, phase.COARSE, cards.MUON), phase.rec_of(table, phase.COARSE, cards.GD)
    taus = sorted(set(m.index) & set(g.index))
    if not taus:
        return {}
    star = phase.tau_star(table)
    d = ", ".join(f"{t:g}: {m[t] - g[t]:+.4f}" for t in taus)
    note = f"d(tau) = rec_Muon - rec_GD at tau {d}" + ("" if math.isfinite(star) else "; no crossing")
    return {("Section 8", "tau* (coarse CPU grid, 3 seeds)", "tau_star"): Found(star, "coarse grid, S5", note=note)}


def signum_audit(table: pd.DataFrame, zoo_summary: pd.DataFrame, zoo_spread: dict, budget: int, lr: float) -> dict:
    """The audit's (T = ``budget``, cos, ``lr``) cell beside Table 2's signum row, read against the
    ensemble of Table 2's cell (``zoo_spread``: sensing_quantities' spread of the zoo's signum cell
    at ``lr``)."""
    hit = table[(table["part"] == "P2") & (table["T"] == budget) & (table["anneal"] == "cos") & (table["lr"] == lr)]
    zoo = zoo_summary[(zoo_summary["method"] == cards.SIGNUM) & (zoo_summary["lr"] == lr)]
    if not len(hit):
        return {}
    full = bool(hit["all steps"].iloc[0])
    note = (f"Table 2's cell {float(zoo['rec'].iloc[0]):.4f} (its runs stop at the bar; the audit's run all "
            f"{budget} steps); read against Table 2's cell's ensemble" if len(zoo) else "")
    if not full:
        note += "; a run stopped before T: not the no-early-stop run"
    return {SIGNUM_AUDIT[0].key: Found(float(hit["rec"].iloc[0]), f"signum_audit_T{budget}_cos, lr {lr:g}",
                                       note=note, **zoo_spread)}
