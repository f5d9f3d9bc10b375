"""The matrix-sensing testbed (spec: sensing.md §1, §2.1, §5) and its batched run loop.

A batch is any set of runs of one method on one instance that differ in learning rate (and, for
the sensitivity reruns, in a relative perturbation of the initial factors). They advance as one
tensor program; a run that stops (interpolated or diverged) leaves the batch, so the others keep
their exact step semantics.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from . import gauge, optim

STATUS_INTERPOLATED, STATUS_BUDGET, STATUS_DIVERGED = "interpolated", "budget", "diverged"
DIVERGENCE_BOUND = 1e8


@dataclass(frozen=True)
class Instance:
    """A planted low-rank sensing problem: y = A vec(X), vec row-major."""

    A: Tensor  # (m, n²)
    y: Tensor  # (m,)
    X: Tensor  # (n, n)


def measurements(n: int, rank: int, per_dof: float) -> int:
    """m = int(per_dof * dof), dof = r(2n - r): the CPU protocol truncates."""
    return int(per_dof * rank * (2 * n - rank))


def make_instance(n: int, rank: int, m: int, seed: int) -> Instance:
    """Draw U*, V*, then A from one CPU generator seeded ``seed``, in float32 (spec §1.2)."""
    g = torch.Generator().manual_seed(seed)
    u = torch.randn(n, rank, generator=g) / math.sqrt(rank)
    v = torch.randn(n, rank, generator=g) / math.sqrt(rank)
    x = u @ v.T
    a = torch.randn(m, n * n, generator=g)
    return Instance(A=a, y=a @ x.reshape(-1), X=x)


def init_factors(n: int, k: int, scale: float, seed: int) -> tuple[Tensor, Tensor]:
    """U then V, each randn(n, k) * scale, from a generator seeded ``seed + 7`` (spec §1.3)."""
    g = torch.Generator().manual_seed(seed + 7)
    u = torch.randn(n, k, generator=g) * scale
    v = torch.randn(n, k, generator=g) * scale
    return u, v


GEMM_ROWS = 4


def loss(inst: Instance, u: Tensor, v: Tensor) -> Tensor:
    """Per-run mean squared residual, no ½: u, v are (B, n, k); returns (B,).

    The batch is padded with zero rows to a multiple of GEMM_ROWS before the product with A:
    BLAS picks its kernel (and so its rounding) by the number of rows, and below four rows it
    differs. Padding makes every run's arithmetic independent of how many runs share its batch,
    so a batched run is bit-identical to the same run alone.
    """
    count = u.shape[0]
    w = (u @ v.mT).reshape(count, -1)
    pad = -count % GEMM_ROWS
    if pad:
        w = torch.cat([w, w.new_zeros(pad, w.shape[1])])
    return ((w @ inst.A.T)[:count] - inst.y).pow(2).mean(dim=1)


def effective_rank(sigma: Tensor) -> Tensor:
    """Entropy effective rank of singular values (not their squares), with 1e-12 guards."""
    p = sigma / (sigma.sum(dim=-1, keepdim=True) + 1e-12)
    return torch.exp(-(p * torch.log(p + 1e-12)).sum(dim=-1))


def metrics(inst: Instance, u: Tensor, v: Tensor) -> dict[str, Tensor]:
    """Recovery error, effective rank, nuclear norm and balancedness of each run: (B,) each."""
    w = gauge.product(u, v)
    sigma = torch.linalg.svdvals(w)
    return {
        "rec": torch.linalg.matrix_norm(w - inst.X) / torch.linalg.matrix_norm(inst.X),
        "erank": effective_rank(sigma),
        "nuc": sigma.sum(dim=-1),
        "bal": torch.linalg.matrix_norm(gauge.balance(u, v)),
    }


@dataclass
class RunResult:
    lr: float
    perturbation: float
    status: str
    steps: int
    train: float
    rec: float
    erank: float
    nuc: float
    bal: float
    curve_steps: list[int]
    curve_loss: list[float]


def cosine_factor(t: int, budget: int) -> float:
    """½(1 + cos(π t / T)), horizon = the budget, η_T = 0."""
    return 0.5 * (1.0 + math.cos(math.pi * t / budget))


def train(inst: Instance, rule: optim.Rule, lrs: list[float], u0: Tensor, v0: Tensor, *,
          budget: int, decayed: bool, tol: float = 1e-7, check_every: int = 200,
          perturbations: list[float] | None = None) -> list[RunResult]:
    """Run the canonical loop (spec §2.1) for every lr at once, from the same initial factors.

    ``perturbations`` (one per run, default 0) scale U0 by (1 + δ): the sensitivity reruns.
    Returns one result per run, in input order.
    """
    count = len(lrs)
    deltas = list(perturbations) if perturbations is not None else [0.0] * count
    if len(deltas) != count:
        raise ValueError("one perturbation per learning rate")
    u = torch.stack([u0 * (1.0 + d) if d else u0.clone() for d in deltas])
    v = v0.expand(count, *v0.shape).clone()
    base_lr = torch.tensor(lrs, dtype=torch.float64)
    state = rule.init([u, v])
    active = torch.arange(count)  # original index of each row of the batch
    curves: list[list[float]] = [[] for _ in range(count)]
    curve_steps: list[int] = []
    results: dict[int, RunResult] = {}

    def retire(rows: Tensor, t: int, train_loss: Tensor, status: str) -> None:
        if status == STATUS_DIVERGED:
            values = {key: [math.nan] * len(rows) for key in ("rec", "erank", "nuc", "bal")}
            final_train = [math.nan] * len(rows)
        else:
            # one run at a time: log/exp round by position in a vectorised kernel (see matrix_power)
            per_run = [metrics(inst, u[r : r + 1], v[r : r + 1]) for r in rows.tolist()]
            values = {key: [m[key].item() for m in per_run] for key in per_run[0]}
            final_train = train_loss[rows].tolist()
        for j, row in enumerate(rows.tolist()):
            run = int(active[row])
            results[run] = RunResult(
                lr=lrs[run], perturbation=deltas[run], status=status, steps=t,
                train=final_train[j], rec=values["rec"][j], erank=values["erank"][j],
                nuc=values["nuc"][j], bal=values["bal"][j],
                curve_steps=curve_steps[: len(curves[run])], curve_loss=curves[run])

    t = 0
    for t in range(1, budget + 1):
        u.requires_grad_(True)
        v.requires_grad_(True)
        losses = loss(inst, u, v)
        gu, gv = torch.autograd.grad(losses.sum(), [u, v])
        u, v = u.detach(), v.detach()
        train_loss = losses.detach()
        if t == 1 or t % check_every == 0 or t == budget:
            curve_steps.append(t)
            for row, value in enumerate(train_loss.tolist()):
                curves[int(active[row])].append(value)
        lr_t = base_lr[active] * cosine_factor(t, budget) if decayed else base_lr[active]
        (du, dv), state = rule.update([gu, gv], state, lr_t, t)
        u, v = u + du, v + dv
        diverged = ~torch.isfinite(train_loss) | (train_loss > DIVERGENCE_BOUND)
        done = diverged.clone()
        if diverged.any():
            retire(diverged.nonzero().flatten(), t, train_loss, STATUS_DIVERGED)
        if t % check_every == 0:
            converged = ~diverged & (train_loss < tol)
            if converged.any():
                retire(converged.nonzero().flatten(), t, train_loss, STATUS_INTERPOLATED)
                done |= converged
        if done.any():
            keep = (~done).nonzero().flatten()
            if len(keep) == 0:
                break
            u, v, active, train_loss = u[keep], v[keep], active[keep], train_loss[keep]
            state = optim.select_runs(state, keep)
    else:
        rows = torch.arange(len(active))
        interpolated = train_loss < tol
        for status, mask in ((STATUS_INTERPOLATED, interpolated), (STATUS_BUDGET, ~interpolated)):
            if mask.any():
                retire(rows[mask], budget, train_loss, status)
    return [results[i] for i in range(count)]
