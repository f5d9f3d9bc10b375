"""Aggregation over seeds, learning-rate selection rules and the classification counts
(spec: sensing.md §5, §6, §8). Every function works on run records (as a DataFrame), nothing else."""

from __future__ import annotations

import math

import pandas as pd

from ..core import records
from ..optim import cards

CELL = ["method", "lr"]


def frame(recs: list[dict]) -> pd.DataFrame:
    """One row per run with the fields selection needs; runs made under different numerics
    modes are refused (records.one_numerics)."""
    records.one_numerics(recs, "runs of one summary")
    cols = ["experiment", "method", "lr", "seed", "perturbation", "status", "steps",
            "train", "rec", "erank", "nuc", "bal"]
    return pd.DataFrame([{c: r[c] for c in cols} for r in recs], columns=cols)



def summary(recs: list[dict], grids: dict[str, list[float]], rule: str, tol: float) -> pd.DataFrame:
    """A sensing experiment's summary from its run records: seed means per cell and the rule's
    selection (what ``results/<experiment>/summary.csv`` holds)."""
    return select(aggregate(frame(recs)), grids, rule, tol)


def seed_values(runs: pd.DataFrame, method: str, lr: float, column: str) -> list[float]:
    """One cell's unperturbed per-seed values in seed order: the spread behind its mean."""
    cell = runs[(runs["method"] == method) & (runs["lr"] == lr) & (runs["perturbation"] == 0)]
    return [float(v) for v in cell.sort_values("seed")[column]]

def aggregate(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (method, lr) cell: plain means over seeds (a NaN seed makes the mean NaN), worst train."""
    grouped = runs.groupby(CELL, sort=False)
    mean = lambda col: grouped[col].agg(lambda s: s.mean(skipna=False))
    cells = pd.DataFrame({
        "rec": mean("rec"), "train": mean("train"),
        "worst_train": grouped["train"].agg(lambda s: s.max(skipna=False)),
        "erank": mean("erank"), "nuc": mean("nuc"), "bal": mean("bal"),
        "rec_sd": grouped["rec"].agg(lambda s: s.std(ddof=0, skipna=False)),
        "steps": grouped["steps"].mean(), "max_steps": grouped["steps"].max(),
        "seeds": grouped["seed"].count(),
        "interpolated": grouped["status"].agg(lambda s: int((s == "interpolated").sum())),
        "diverged": grouped["status"].agg(lambda s: int((s == "diverged").sum())),
    }).reset_index()
    return cells


def score_s1(cell: pd.Series, tol: float) -> tuple[float, bool]:
    """S1 "worst-seed strict": gated on max train < tol."""
    gated = cell["worst_train"] < tol
    return (cell["rec"] if gated else cell["rec"] + 10 + cell["train"]), bool(gated)


def score_s2(cell: pd.Series, tol: float) -> tuple[float, bool]:
    """S2 "mean strict": gated on mean train < tol."""
    gated = cell["train"] < tol
    return (cell["rec"] if gated else cell["rec"] + 10 + cell["train"]), bool(gated)


LOOSE_GATE = 1e-4  # S5's gate: the phase diagram's cells need not interpolate to the 1e-7 bar


def score_s5(cell: pd.Series, tol: float) -> tuple[float, bool]:
    """S5 "loose" (phase diagram): gated on mean train < 1e-4, whatever the run's bar ``tol``;
    otherwise mean rec + 10 + mean train."""
    gated = cell["train"] < LOOSE_GATE
    return (cell["rec"] if gated else cell["rec"] + 10 + cell["train"]), bool(gated)


def score_s4(cell: pd.Series, tol: float) -> tuple[float, bool]:
    """S4 "dial": a cell where any seed diverged is dropped; gated on mean train < tol;
    otherwise mean rec + 10 (no train term)."""
    if cell["diverged"] > 0:
        return math.nan, False
    gated = cell["train"] < tol
    return (cell["rec"] if gated else cell["rec"] + 10), bool(gated)


def score_s3a(cell: pd.Series, tol: float) -> tuple[float, bool]:
    """S3a "rec-sel" (decay control): lowest mean rec among cells with mean train < tol; if no
    cell passes, lowest mean rec among all finite cells, with no penalty (a "floor" can win)."""
    return cell["rec"], bool(cell["train"] < tol)


def score_s3b(cell: pd.Series, tol: float) -> tuple[float, bool]:
    """S3b "spd-sel" (decay control): fewest mean steps among cells with mean train < tol; if no
    cell passes, lowest mean train among all finite cells."""
    gated = cell["train"] < tol
    return (cell["steps"] if gated else cell["train"]), bool(gated)


def score_s6(cell: pd.Series, tol: float) -> tuple[float, bool]:
    """S6 "none" (lr sensitivity): every lr is reported, none is selected."""
    return math.nan, bool(cell["train"] < tol)


RULES = {"S1": score_s1, "S2": score_s2, "S3a": score_s3a, "S3b": score_s3b, "S4": score_s4, "S5": score_s5,
         "S6": score_s6}
# Rules whose gated cells always beat the others, which are only a fallback pool; the rest rank
# every finite cell on its score (their penalty terms do the gating).
FALLBACK_RULES = {"S3a", "S3b"}


def select(cells: pd.DataFrame, grids: dict[str, list[float]], rule: str, tol: float) -> pd.DataFrame:
    """Score every cell and mark the selected lr of each method.

    Cells are scanned in grid order; a cell with non-finite mean rec or train is skipped; the
    strictly lowest score wins, so ties go to the smaller lr. Adds columns ``score``, ``gated``,
    ``selected`` and, on selected rows, ``runner_up_lr`` and ``margin`` (runner-up score minus
    the winner's): the selection's decisiveness, compared later with the measured sensitivity.
    """
    scorer = RULES[rule]
    out = []
    for method, grid in grids.items():
        rows = cells[cells["method"] == method].set_index("lr")
        scored = []
        for lr in grid:
            if lr not in rows.index:
                raise ValueError(f"no runs for {method} at lr {lr}")
            cell = rows.loc[lr]
            finite = math.isfinite(cell["rec"]) and math.isfinite(cell["train"])
            score, gated = scorer(cell, tol) if finite else (math.nan, False)
            scored.append((lr, score, gated))
        pool = [s for s in scored if math.isfinite(s[1])]
        if rule in FALLBACK_RULES and any(s[2] for s in pool):
            pool = [s for s in pool if s[2]]
        ranked = sorted(pool, key=lambda s: s[1])  # stable
        best = ranked[0][0] if ranked else None
        for lr, score, gated in scored:
            row = rows.loc[lr].to_dict() | {"method": method, "lr": lr, "score": score,
                                             "gated": gated, "selected": lr == best,
                                             "runner_up_lr": math.nan, "margin": math.nan}
            if lr == best and len(ranked) > 1:
                row["runner_up_lr"], row["margin"] = ranked[1][0], ranked[1][1] - ranked[0][1]
            out.append(row)
    cols = ["method", "lr", "selected", "gated", "score", "runner_up_lr", "margin", "rec", "rec_sd", "train",
            "worst_train", "erank", "nuc", "bal", "steps", "max_steps", "seeds", "interpolated", "diverged"]
    return pd.DataFrame(out)[cols]


def klass(method: str) -> str:
    """The method's a-priori class, "eq" or "cw" (or "ctrl" for a control), from its card
    (gaugelab.optim.cards)."""
    return cards.klass(method)


def split_members(pairs) -> list[tuple[str, float]]:
    """The (method, value) pairs a split counts: finite values of the two classes. A control
    (ScaledGD, class "ctrl") is on neither side, so no count includes it."""
    return [(m, float(v)) for m, v in pairs if math.isfinite(v) and klass(m) in ("eq", "cw")]


def clean_split(selected: pd.DataFrame) -> dict:
    """Primary count: CLEAN if every eq method recovers better than every cw method."""
    return clean_split_from_values(zip(selected["method"], selected["rec"]))


def clean_split_from_values(pairs) -> dict:
    """:func:`clean_split` on (method, rec) pairs of :func:`split_members`. No fitted threshold."""
    finite = split_members(pairs)
    eq = [r for m, r in finite if klass(m) == "eq"]
    cw = [r for m, r in finite if klass(m) == "cw"]
    if not eq or not cw:
        return {"verdict": "INCOMPLETE", "correct": 0, "total": len(finite), "gap": math.nan,
                "eq_max": math.nan, "cw_min": math.nan}
    eq_max, cw_min = max(eq), min(cw)
    clean = eq_max < cw_min
    return {"verdict": "CLEAN" if clean else "OVERLAP", "correct": len(finite) if clean else 0,
            "total": len(finite), "gap": cw_min - eq_max if clean else math.nan,
            "eq_max": eq_max, "cw_min": cw_min}


def threshold_misses(pairs, threshold: float) -> list[str]:
    """The methods among :func:`split_members` of (method, value) ``pairs`` on the wrong side of
    ``threshold``: an eq method at or above it, a cw method below it."""
    return [m for m, value in split_members(pairs) if (value < threshold) != (klass(m) == "eq")]


def threshold_count(pairs, threshold: float) -> dict:
    """The matches of :func:`split_members` with their class against ``threshold``: the count
    the rank and midpoint splits give."""
    pairs = list(pairs)
    total = len(split_members(pairs))
    return {"threshold": float(threshold), "correct": total - len(threshold_misses(pairs, threshold)), "total": total}


def rank_split(selected: pd.DataFrame) -> dict:
    """Secondary count: a method "preserves" if its erank is below the GD/Adam midpoint."""
    by = selected.set_index("method")["erank"]
    if cards.GD in by and cards.ADAM in by and math.isfinite(by[cards.GD]) and math.isfinite(by[cards.ADAM]):
        threshold = 0.5 * (by[cards.GD] + by[cards.ADAM])
    else:
        threshold = 9.0
    return threshold_count(by.items(), threshold)


def midpoint_split(selected: pd.DataFrame) -> dict:
    """Midpoint count (decay control, Table 6): a method "preserves" if its rec is below
    mid = ½(rec_GD + rec_Adam) of the same selected rows; matches with its class are counted
    over :func:`split_members`. NaN threshold (and no count) without both GD and Adam."""
    by = selected.set_index("method")["rec"]
    if cards.GD not in by or cards.ADAM not in by or not (math.isfinite(by[cards.GD])
                                                          and math.isfinite(by[cards.ADAM])):
        return {"threshold": math.nan, "correct": 0, "total": 0}
    threshold = 0.5 * (by[cards.GD] + by[cards.ADAM])
    return threshold_count(by.items(), threshold)
