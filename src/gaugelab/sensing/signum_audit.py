"""App. D.10's signum audit, "recovery without equivariance" (spec: sensing.md §12): is signum's
Table 2 failure a horizon or budget effect rather than a property of its update class?

Signum only, float32, the Table 2 instances and seeds, every run all T steps (no early stop):

- P1, mechanism diagnostics: cos, T = 4×10⁴, lr 3e-3; every 2000 steps rec, erank, the spectra of
  U's momentum, of its sign and of U's windowed displacement, the alignment of W's windowed change
  with X*, and W's top four singular values (gaugelab.sensing.signum_diagnostics).
- P2, horizon × schedule: T × {cos, lin} × lr, mean rec over seeds and each seed's.
- P3, spectral tail: the phase diagram's targets (testbed.make_tail_instance), cos, T = 4×10⁴.

P2 and P3 are ordinary sensing experiments. The (T = 2×10⁴, cos) arm is not Table 2's runs: those
stop early once signum's train loss is below the bar (at step 19 600 in every seed here), the
audit's run all T steps; its row is held against Table 2's printed value and read against the
ensemble of Table 2's cell (the same instance, seeds and lr), which it continues.
"""

from __future__ import annotations

import math

import pandas as pd

from ..optim import cards
from .names import value_tag

SHAPES = {"cosine": "cos", "linear": "lin"}


def horizon_arm(budget: int, anneal: str) -> str:
    return f"signum_audit_T{budget}_{SHAPES[anneal]}"


def tail_arm(tau: float) -> str:
    return f"signum_audit_tail_tau{value_tag(tau)}"


def arms(config: dict) -> dict[str, dict]:
    """P2's and P3's arms by name, as sensing experiments (selection S6: every lr reported)."""
    zoo, audit = config["zoo"], config["signum_audit"]
    base = {**zoo, "grids": {cards.SIGNUM: list(audit["lrs"])}, "decayed": [cards.SIGNUM], "selection": "S6",
            "strict": False, "early_stop": False}
    out = {}
    for budget in audit["budgets"]:
        for anneal in audit["anneals"]:
            out[horizon_arm(int(budget), anneal)] = {**base, "budget": int(budget), "anneal": anneal}
    for tau in audit["taus"]:
        out[tail_arm(tau)] = {**base, "budget": int(audit["long_budget"]), "tail": float(tau)}
    return out


def diagnostics_experiment(config: dict) -> dict:
    """P1's runs: signum at one lr, cos, the long budget, no early stop."""
    zoo, audit = config["zoo"], config["signum_audit"]
    return {**zoo, "grids": {cards.SIGNUM: [audit["diagnose_lr"]]}, "decayed": [cards.SIGNUM], "selection": "S6",
            "strict": False, "early_stop": False, "budget": int(audit["long_budget"])}


def horizon(summaries: dict[str, pd.DataFrame], runs: dict[str, pd.DataFrame], config: dict) -> pd.DataFrame:
    """P2 and P3 in one table: per arm and lr the mean rec over seeds, each seed's rec and whether
    every run executed all T steps (the audit has no early stop). ``runs``: each arm's run records
    (select.frame), those it shares with the zoo included."""
    audit, rows = config["signum_audit"], []
    for (budget, anneal, tau), name in arm_keys(config).items():
        cells, arm_runs = summaries[name], runs[name]
        for lr in audit["lrs"]:
            cell = arm_runs[(arm_runs["lr"] == lr) & (arm_runs["perturbation"] == 0)].sort_values("seed")
            hit = cells[cells["lr"] == lr]
            rows.append({"part": "P2" if tau is None else "P3", "T": budget, "anneal": SHAPES[anneal],
                         "tau": math.nan if tau is None else tau, "lr": lr,
                         "rec": float(hit["rec"].iloc[0]) if len(hit) else math.nan,
                         "seed recs": " ".join(f"{r:.4f}" for r in cell["rec"]),
                         "all steps": bool(len(cell)) and bool((cell["steps"] == budget).all())})
    return pd.DataFrame(rows)


def arm_keys(config: dict) -> dict[tuple, str]:
    """(T, anneal, tau or None) -> the arm's name, P2's then P3's."""
    audit = config["signum_audit"]
    keys = {(int(b), a, None): horizon_arm(int(b), a) for b in audit["budgets"] for a in audit["anneals"]}
    keys.update({(int(audit["long_budget"]), "cosine", float(tau)): tail_arm(tau) for tau in audit["taus"]})
    return keys
