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
DIAL_DIVERGENCE_BOUND = 1e6
LOOPS = ("canonical", "dial")


@dataclass(frozen=True)
class Instance:
    """A planted low-rank sensing problem, y = A vec(X) with vec row-major; or several stacked
    along a leading dimension (A: (S, m, n²), y: (S, m), X: (S, n, n)), one per seed."""

    A: Tensor  # (m, n²) or (S, m, n²)
    y: Tensor  # (m,) or (S, m)
    X: Tensor  # (n, n) or (S, n, n)

    def stacked(self) -> "Instance":
        return self if self.A.dim() == 3 else Instance(self.A[None], self.y[None], self.X[None])


def stack(instances: list[Instance]) -> Instance:
    """Several instances of one size as one stacked instance."""
    return Instance(*(torch.stack([getattr(i, f) for i in instances]) for f in ("A", "y", "X")))


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


@dataclass(frozen=True)
class Layout:
    """Where each run of a batch sits in the product with A: its instance and its row within
    that instance's block. Blocks have the same number of rows, padded with zeros to a multiple
    of GEMM_ROWS: BLAS picks its kernel (and so its rounding) by the number of rows, and below
    four rows it differs. So every run's arithmetic is independent of which runs share its
    batch, and a batched run is bit-identical to the same run alone."""

    which: Tensor  # (B,) instance index of each run
    slot: Tensor   # (B,) row within the instance's block
    rows: int
    dense: bool    # runs already sit block after block, no padding: the batch is its own blocks

    @classmethod
    def of(cls, which: Tensor, instances: int = 1) -> "Layout":
        which = which.to(torch.long)
        slot = torch.zeros_like(which)
        counts: dict[int, int] = {}
        for i, s in enumerate(which.tolist()):
            slot[i] = counts.get(s, 0)
            counts[s] = slot[i].item() + 1
        most = max(counts.values(), default=1)
        rows = most + (-most % GEMM_ROWS)
        dense = len(which) == rows * instances and bool((which == torch.arange(len(which)) // rows).all())
        return cls(which, slot, rows, dense)


def loss(inst: Instance, u: Tensor, v: Tensor, layout: Layout | None = None) -> Tensor:
    """Per-run mean squared residual, no ½: u, v are (B, n, k); returns (B,).

    ``inst`` may be one instance (every run uses it) or a stack; ``layout`` says which instance
    each run uses (default: all the first).
    """
    inst = inst.stacked()
    count = u.shape[0]
    if layout is None:
        layout = Layout.of(torch.zeros(count, dtype=torch.long))
    w = (u @ v.mT).reshape(count, -1)
    if layout.dense:  # the same product, without copying into zero-padded blocks
        pred = torch.bmm(w.view(inst.A.shape[0], layout.rows, -1), inst.A.mT).reshape(count, -1)
    else:
        blocks = w.new_zeros(inst.A.shape[0], layout.rows, w.shape[1])
        blocks = blocks.index_put((layout.which, layout.slot), w)
        pred = torch.bmm(blocks, inst.A.mT)[layout.which, layout.slot]
    return (pred - inst.y[layout.which]).pow(2).mean(dim=1)


def effective_rank(sigma: Tensor) -> Tensor:
    """Entropy effective rank of singular values (not their squares), with 1e-12 guards."""
    p = sigma / (sigma.sum(dim=-1, keepdim=True) + 1e-12)
    return torch.exp(-(p * torch.log(p + 1e-12)).sum(dim=-1))


def metrics(target: Tensor, u: Tensor, v: Tensor) -> dict[str, Tensor]:
    """Recovery error against ``target`` (X*), effective rank, nuclear norm and balancedness of
    each run: (B,) each."""
    w = gauge.product(u, v)
    sigma = torch.linalg.svdvals(w)
    return {
        "rec": torch.linalg.matrix_norm(w - target) / torch.linalg.matrix_norm(target),
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


class _Group:
    """The runs of a batch that share one update rule, with that rule's state."""

    def __init__(self, rule: optim.Rule, members: Tensor, u: Tensor, v: Tensor):
        self.rule, self.members = rule, members  # members: original run ids, ascending
        self.state = rule.init([u[members], v[members]])
        self.place(members)

    def place(self, rows: Tensor) -> None:
        """Where the group's runs sit in the batch: a slice (a view, no copy) when contiguous."""
        first = int(rows[0])
        contiguous = bool((rows == torch.arange(first, first + len(rows))).all())
        self.rows = slice(first, first + len(rows)) if contiguous else rows

    def keep(self, still_active: Tensor, position: Tensor) -> None:
        mask = still_active[self.members]
        if not mask.all():
            self.state = optim.select_runs(self.state, mask.nonzero().flatten())
            self.members = self.members[mask]
        self.place(position[self.members])


def train(inst: Instance, rule: optim.Rule | list[optim.Rule], lrs: list[float], u0: Tensor, v0: Tensor, *,
          budget: int, decayed: bool | list[bool], tol: float = 1e-7, check_every: int = 200,
          perturbations: list[float] | None = None, which: list[int] | None = None,
          loop: str = "canonical", early_stop: bool = True) -> list[RunResult]:
    """Run the canonical loop (spec §2.1), or the dial loop (§2.2), for every run at once.

    The dial loop has no per-step divergence test: at each check it evaluates the post-update
    loss, stops a run as diverged above 1e6 (or non-finite) and as interpolated below ``tol``;
    at the budget the post-update loss decides the status and is the reported train loss.
    ``early_stop=False`` is the no-early-stop variant (§2.2, decay-full mode): every run executes
    all ``budget`` steps, and ``tol`` still decides its status at the end.

    ``rule`` and ``decayed`` are shared or given per run: runs of several methods share the
    product with A (the cost that dominates), each method updating its own runs. ``inst`` is one
    instance or a stack (one per seed); ``which`` gives each run's instance (default: the first).
    ``u0``, ``v0`` are shared (n, k) factors or one per run (B, n, k). ``perturbations`` (default
    0) scale each run's U0 by (1 + δ): the sensitivity reruns. Returns one result per run, in
    input order; each run's numbers are independent of the batch it ran in.
    """
    if loop not in LOOPS:
        raise ValueError(f"unknown loop {loop!r}; use one of {LOOPS}")
    dial = loop == "dial"
    inst = inst.stacked()
    count = len(lrs)
    rules = rule if isinstance(rule, list) else [rule] * count
    decays = decayed if isinstance(decayed, list) else [decayed] * count
    deltas = list(perturbations) if perturbations is not None else [0.0] * count
    if not len(rules) == len(decays) == len(deltas) == count:
        raise ValueError("rule, decayed and perturbations need one entry per run")
    u0 = u0.expand(count, *u0.shape[-2:])
    v = v0.expand(count, *v0.shape[-2:]).clone()
    u = torch.stack([u0[i] * (1.0 + d) if d else u0[i].clone() for i, d in enumerate(deltas)])
    run_instance = torch.tensor(which if which is not None else [0] * count, dtype=torch.long)
    base_lr = torch.tensor(lrs, dtype=torch.float64)
    decay_mask = torch.tensor(decays)
    groups = []
    for r in {id(r): r for r in rules}.values():
        members = torch.tensor([i for i in range(count) if rules[i] is r], dtype=torch.long)
        groups.append(_Group(r, members, u, v))
    active = torch.arange(count)  # original run id of each row of the batch
    position = torch.arange(count)  # row of each original run (valid while active)
    layout = Layout.of(run_instance, inst.A.shape[0])
    curves: list[list[float]] = [[] for _ in range(count)]
    curve_steps: list[int] = []
    results: dict[int, RunResult] = {}

    def retire(rows: Tensor, t: int, train_loss: Tensor, status: str) -> None:
        if status == STATUS_DIVERGED:
            values = {key: [math.nan] * len(rows) for key in ("rec", "erank", "nuc", "bal")}
            final_train = [math.nan] * len(rows)
        else:
            # one run at a time: log/exp round by position in a vectorised kernel (see matrix_power)
            per_run = [metrics(inst.X[run_instance[active[r]]], u[r : r + 1], v[r : r + 1])
                       for r in rows.tolist()]
            values = {key: [m[key].item() for m in per_run] for key in per_run[0]}
            final_train = train_loss[rows].tolist()
        for j, row in enumerate(rows.tolist()):
            run = int(active[row])
            results[run] = RunResult(
                lr=lrs[run], perturbation=deltas[run], status=status, steps=t,
                train=final_train[j], rec=values["rec"][j], erank=values["erank"][j],
                nuc=values["nuc"][j], bal=values["bal"][j],
                curve_steps=curve_steps[: len(curves[run])], curve_loss=curves[run])

    for t in range(1, budget + 1):
        u.requires_grad_(True)
        v.requires_grad_(True)
        losses = loss(inst, u, v, layout)
        gu, gv = torch.autograd.grad(losses.sum(), [u, v])
        u, v = u.detach(), v.detach()
        train_loss = losses.detach()
        if t == 1 or t % check_every == 0 or t == budget:
            curve_steps.append(t)
            for row, value in enumerate(train_loss.tolist()):
                curves[int(active[row])].append(value)
        factor = cosine_factor(t, budget)
        lr_t = torch.where(decay_mask[active], base_lr[active] * factor, base_lr[active])
        du, dv = torch.empty_like(u), torch.empty_like(v)
        for group in groups:
            rows = group.rows
            (du_g, dv_g), group.state = group.rule.update([gu[rows], gv[rows]], group.state, lr_t[rows], t)
            du[rows], dv[rows] = du_g, dv_g
        u, v = u + du, v + dv
        if not dial:
            check_loss = train_loss
            diverged = ~torch.isfinite(check_loss) | (check_loss > DIVERGENCE_BOUND)
        elif t % check_every == 0 or t == budget:
            with torch.no_grad():
                check_loss = loss(inst, u, v, layout)  # post-update
            diverged = ~torch.isfinite(check_loss) | (check_loss > DIAL_DIVERGENCE_BOUND)
        else:
            diverged = torch.zeros(len(active), dtype=torch.bool)
        done = diverged.clone()
        if diverged.any():
            retire(diverged.nonzero().flatten(), t, check_loss, STATUS_DIVERGED)
        if early_stop and t % check_every == 0:
            converged = ~diverged & (check_loss < tol)
            if converged.any():
                retire(converged.nonzero().flatten(), t, check_loss, STATUS_INTERPOLATED)
                done |= converged
        if done.any():
            keep = (~done).nonzero().flatten()
            if len(keep) == 0:
                break
            u, v, active, check_loss = u[keep], v[keep], active[keep], check_loss[keep]
            still_active = torch.zeros(count, dtype=torch.bool)
            still_active[active] = True
            position[active] = torch.arange(len(active))
            groups = [g for g in groups if still_active[g.members].any()]
            for group in groups:
                group.keep(still_active, position)
            layout = Layout.of(run_instance[active], inst.A.shape[0])
    else:
        rows = torch.arange(len(active))
        interpolated = check_loss < tol
        for status, mask in ((STATUS_INTERPOLATED, interpolated), (STATUS_BUDGET, ~interpolated)):
            if mask.any():
                retire(rows[mask], budget, check_loss, status)
    return [results[i] for i in range(count)]
