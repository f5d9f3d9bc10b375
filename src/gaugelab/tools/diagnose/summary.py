"""The diagnoses in one table's terms: a flat row per (optimizer, testbed), and what they add up to."""

from __future__ import annotations

import math

from .testbeds import TESTBEDS
from .verdicts import VERDICTS, agrees


def summary_rows(bundles: list[dict]) -> list[dict]:
    """One flat row per (optimizer, testbed), in input order: the table's data."""
    rows = []
    for b in bundles:
        for name, r in sorted(b["reports"].items(), key=lambda item: TESTBEDS.index(item[0])):
            ev = {k: (math.nan if v is None and k != "identity_first_difference" else v)
                  for k, v in r["evidence"].items()}  # JSON null is a NaN
            rows.append({
                "optimizer": r["optimizer"], "label": r["label"], "kind": r["kind"], "testbed": name,
                "dtype": r["environment"]["dtype"], "lr": r["lr"], "steps": r["steps"], "verdict": r["verdict"],
                "a_priori": {True: "equivariant", False: "basis-dependent", None: ""}[r["a_priori_equivariant"]],
                "gauge_step1": ev["gauge_step1"], "noise_step1": ev["noise_step1"], "gauge_max": ev["gauge_max"],
                "split_step": ev.get("split_step", math.nan), "ratio": ev.get("ratio", math.nan),
                "late_decades": ev.get("late_decades", math.nan), "floor": r["thresholds"]["floor"],
                "max_gauge_over_noise": ev.get("max_gauge_over_noise", math.nan),
                "identity_first_difference": ev.get("identity_first_difference"),
                "diverged_at": ev.get("diverged_at"), "base_moved": ev["base_moved"],
                "summary": r["summary"],
            })
    return rows


def caption(rows: list[dict]) -> str:
    """The counts per verdict and whether the engine's rules agree with their a-priori class."""
    counts = {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS}
    disagree = [f"{r['optimizer']} ({r['testbed']})" for r in rows if r["a_priori"] and not agrees(r)]
    return (", ".join(f"{n} {v}" for v, n in counts.items() if n) + "; engine rules "
            + ("all agree with their a-priori class" if not disagree else f"disagreeing: {', '.join(disagree)}")
            + " (chaotic counts as equivariant: amplified round-off, not the basis)")
