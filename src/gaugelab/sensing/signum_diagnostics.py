"""App. D.10's P1, signum's mechanism diagnostics (spec: sensing.md §12 P1): its runs observed
through loop.train's observe hook every ``diagnose_every`` steps. The rest of the audit
(:mod:`gaugelab.sensing.signum_audit`) reads records only and imports no torch."""

from __future__ import annotations

import math

import pandas as pd
import torch

from ..optim import cards
from . import testbed
from .signum_audit import diagnostics_experiment


def _spectrum(x: torch.Tensor) -> tuple[float, float]:
    """σ₁/σ₂ and the top-energy fraction σ₁²/Σσ² of a matrix (NaN for a zero matrix)."""
    s = torch.linalg.svdvals(x.double())
    energy = float((s * s).sum())
    if energy == 0:
        return math.nan, math.nan
    return float(s[0] / s[1]) if s[1] > 0 else math.inf, float(s[0] ** 2) / energy


class Diagnostics:
    """loop.train's observe hook for P1: one row per run every ``every`` steps (spec §12 P1).
    The windowed quantities compare with the factors ``every`` steps earlier (at t = every, with
    the initial ones)."""

    def __init__(self, targets: list[torch.Tensor], seeds: list[int], factors0: torch.Tensor):
        self.targets, self.seeds = targets, seeds
        self.previous = {run: factors0[run].clone() for run in range(len(seeds))}
        self.rows: list[dict] = []

    def __call__(self, t: int, factors: torch.Tensor, runs: list[int], groups) -> None:
        (rows, state), = groups  # one rule: signum, stacked (its momentum m is (B, 2, n, k))
        momentum = state["m"][0]
        for row, run in enumerate(runs):
            u, v = factors[row, 0], factors[row, 1]
            x = self.targets[run]
            m = testbed.metrics(x, u[None], v[None])
            w, w_before = u @ v.T, self.previous[run][0] @ self.previous[run][1].T
            dw = (w - w_before).double()
            ratio_m, top_m = _spectrum(momentum[row, 0])
            ratio_s, top_s = _spectrum(torch.sign(momentum[row, 0]))
            ratio_d, top_d = _spectrum(u - self.previous[run][0])
            denom = float(torch.linalg.norm(dw) * torch.linalg.norm(x.double()))
            sigma = torch.linalg.svdvals(w.double())[:4].tolist()
            self.rows.append({
                "seed": self.seeds[run], "step": t, "rec": float(m["rec"]), "erank": float(m["erank"]),
                "momentum s1/s2": ratio_m, "momentum top energy": top_m,
                "sign s1/s2": ratio_s, "sign top energy": top_s,
                "dU s1/s2": ratio_d, "dU top energy": top_d,
                "alignment dW.X*": float((dw * x.double()).sum()) / denom if denom else math.nan,
                **{f"W s{i + 1}": value for i, value in enumerate(sigma)},
            })
            self.previous[run] = factors[row].clone()


def run_diagnostics(config: dict, dtype: str = "float32", device: str = "cpu") -> tuple[pd.DataFrame, list[dict]]:
    """P1: signum's runs of :func:`diagnostics_experiment`, one per seed as one batch, observed
    every ``diagnose_every`` steps; the diagnostics and the runs' records."""
    from . import runner
    from ..core import runtime

    audit, seeds = config["signum_audit"], list(config["seeds"])
    exp = diagnostics_experiment(config)
    dev = runtime.configure(device=device)
    prepared = [runner.prepare(exp, seed, dtype, dev) for seed in seeds]
    factors0 = torch.stack([torch.stack([u0, v0]) for _, u0, v0 in prepared])
    observer = Diagnostics([inst.X for inst, _, _ in prepared], seeds, factors0)
    recs = runner.run_batch("signum_audit_diagnostics", exp,
                            [(cards.SIGNUM, seed, float(audit["diagnose_lr"]), 0.0) for seed in seeds],
                            dtype=dtype, device=device, observe=observer, observe_every=int(audit["diagnose_every"]))
    return pd.DataFrame(observer.rows), recs
