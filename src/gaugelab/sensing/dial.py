"""The Adam-p dial (Section 7; spec sensing.md §11): its variants, the per-p tuned envelope
(arm A) and the fixed shared-lr arm (arm B) with its monotonicity verdict."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd


if TYPE_CHECKING:
    from ..optim import Rule


def label(p: float, convention: str) -> str:
    """Run label of a variant: p = 1 is stock Adam whatever the convention."""
    return "p1" if p >= 1 else f"{convention}_p{p:g}"


def labels(ps: list[float], conventions: list[str]) -> list[str]:
    """The variants' labels in the spec's order: p = 1 once, then each convention's p < 1 values."""
    out = [label(1.0, "rms")] if any(p >= 1 for p in ps) else []
    return out + [label(p, convention) for convention in conventions for p in ps if p < 1]


def parse_label(name: str) -> tuple[str | None, float]:
    """Inverse of label(): (convention, p); stock Adam ("p1") has no convention."""
    if name == "p1":
        return None, 1.0
    convention, p = name.split("_p", 1)
    return convention, float(p)


def variants(ps: list[float], conventions: list[str]) -> dict[str, Rule]:
    """Labels and rules in the spec's order (:func:`labels`)."""
    from .. import optim  # here, not at the top: the tables and comparisons use this module without torch

    out = {label(1.0, "rms"): optim.adam_p(1.0)} if any(p >= 1 for p in ps) else {}
    for convention in conventions:
        for p in ps:
            if p < 1:
                out[label(p, convention)] = optim.adam_p(p, convention)
    return out


def envelope(summary: pd.DataFrame, ps: list[float], conventions: list[str]) -> pd.DataFrame:
    """Arm A: the selected (S4) row of every (convention, p); p = 1 is shared by both."""
    chosen = summary[summary["selected"]].set_index("method")
    rows = []
    for convention in conventions:
        for p in ps:
            name = label(p, convention)
            row = chosen.loc[name] if name in chosen.index else None
            rows.append({"convention": convention, "p": p, "variant": name,
                         "lr": math.nan if row is None else row["lr"],
                         **{k: (math.nan if row is None else row[k])
                            for k in ("rec", "rec_sd", "erank", "train", "steps")}})
    return pd.DataFrame(rows)


def monotone(values: list[float]) -> bool:
    """Non-increasing along p = 1 -> 0 (each consecutive pair >=)."""
    return all(a >= b for a, b in zip(values, values[1:]))


def fixed_lr_verdicts(summary: pd.DataFrame, ps: list[float], lrs: list[float], budget: int) -> pd.DataFrame:
    """Arm B (RMS): per shared lr, whether rec and erank both fall monotonically from p = 1 to 0,
    judged only where every p interpolates (no divergence, every seed stopped before the budget)."""
    cells = summary.set_index(["method", "lr"])
    order = sorted(ps, reverse=True)
    rows = []
    for lr in lrs:
        got = [cells.loc[(label(p, "rms"), lr)] for p in order]
        interp = all(c["diverged"] == 0 and c["interpolated"] == c["seeds"] and c["max_steps"] < budget for c in got)
        verdict = "not all interpolate"
        if interp:
            ok = monotone([c["rec"] for c in got]) and monotone([c["erank"] for c in got])
            verdict = "monotone" if ok else "not monotone"
        rows.append({"lr": lr, "verdict": verdict,
                     **{f"rec_p{p:g}": c["rec"] for p, c in zip(order, got)}})
    return pd.DataFrame(rows)
