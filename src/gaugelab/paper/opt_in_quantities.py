"""The reproduced counterparts of the opt-in targets' published values, beside
:mod:`sensing_quantities`' for Sections 5 and 7: Section 8's crossing tau* on the coarse and the fine
grid (published.SECTION8), App. D.10's audit cell (published.SIGNUM_AUDIT) and App. D.9's Table 11
statements (published.LADDER)."""

from __future__ import annotations

import math

import pandas as pd

from ..optim import cards
from ..sensing import phase
from ..sensing import phase_fine as phase_fine_arms
from .compare import Found
from .published import LADDER, SECTION8, SIGNUM_AUDIT


def section8(table: pd.DataFrame, mode: str = phase.COARSE,
             key: tuple = SECTION8[0].key, how: str = "coarse grid, S5") -> dict:
    """One grid's tau*, with d(tau) = rec_Muon - rec_GD at every tau in the note (``table``: the
    phase diagram's selected rows, phase.selected; ``mode``: the grid's, the coarse one or a size of
    the fine one, phase_fine.mode, with its published ``key``)."""
    m, g = phase.rec_of(table, mode, cards.MUON), phase.rec_of(table, mode, cards.GD)
    taus = sorted(set(m.index) & set(g.index))
    if not taus:
        return {}
    star = phase.tau_star(table, (mode, cards.MUON), (mode, cards.GD))
    d = ", ".join(f"{t:g}: {m[t] - g[t]:+.4f}" for t in taus)
    note = f"d(tau) = rec_Muon - rec_GD at tau {d}" + ("" if math.isfinite(star) else "; no crossing")
    return {key: Found(star, how, note=note)}


def phase_fine(table: pd.DataFrame, size: str) -> dict:
    """The fine grid's tau* at the size the paper reports (n = 40, 10 seeds: config
    phase_fine/figure/size), read as the coarse grid's."""
    return section8(table, phase_fine_arms.mode(size), SECTION8[1].key, f"fine grid ({size}), S5 over all seeds")


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


ESSENTIALLY_EXACT = 5e-5  # "recovers essentially exactly": a mean rec that prints 0.0000 at Table 11's 4 decimals
MUON_UP_TO = 256  # the largest n of the published Muon statement
ROWS_READ = ("canary", "size")  # "at every n": the canary and the size ladder, not the rank and m/dof arms


def ladder(table: pd.DataFrame, splits: pd.DataFrame) -> dict:
    """§14.5's three statements as yes/no checks (1 = holds) on the reproduced Table 11, each note
    naming the rows it read and their values (``table``, ``splits``: ladder.table11's)."""
    rows = table[table["kind"].isin(ROWS_READ)]
    found = {}
    muon = rows[(rows["method"] == cards.MUON) & (rows["n"] <= MUON_UP_TO)]
    if len(muon):
        holds = bool((muon["rec"] < ESSENTIALLY_EXACT).all())
        note = "; ".join(f"{r['arm']} (n = {r['n']}): {r['rec']:.4f}" for _, r in muon.iterrows())
        found[LADDER[0].key] = Found(float(holds), f"Muon's mean rec at lr* < {ESSENTIALLY_EXACT:g}", note=note)
    order, notes = [], []
    for arm, group in rows.groupby("arm", sort=False):
        rec = group.set_index("method")["rec"]
        if {cards.GD, cards.SCALAR_ADAM, cards.ADAM} <= set(rec.index):
            gd, scalar, adam = rec[cards.GD], rec[cards.SCALAR_ADAM], rec[cards.ADAM]
            order.append(bool(gd < scalar < adam))
            notes.append(f"{arm}: {gd:.4f} < {scalar:.4f} < {adam:.4f}" + ("" if order[-1] else " fails"))
    if order:
        found[LADDER[1].key] = Found(float(all(order)), "mean rec at lr*, GD, scalar-Adam, Adam", note="; ".join(notes))
    size = splits[splits["kind"] == "size"]
    if len(size):
        holds = bool((size["split"] == "OVERLAP").all())
        note = "; ".join(f"{r['arm']}: {r['split']}" for _, r in splits[splits["kind"].isin(ROWS_READ)].iterrows())
        found[LADDER[2].key] = Found(float(holds), "each size row's split check (ScaledGD excluded)",
                                     note=note + " (the canary is listed, not counted)")
    return found
