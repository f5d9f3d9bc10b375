"""The matrix-sensing testbed (spec: sensing.md §1, §2.1, §5) and its batched run loop.

A batch is any set of runs of one method on one instance that differ in learning rate (and, for
the sensitivity reruns, in a relative perturbation of the initial factors). They advance as one
tensor program; a run that stops (interpolated or diverged) leaves the batch, so the others keep
their exact step semantics.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch import Tensor

from .. import optim
from ..core import gauge, portable, runtime

STATUS_INTERPOLATED, STATUS_BUDGET, STATUS_DIVERGED = "interpolated", "budget", "diverged"
DIVERGENCE_BOUND = 1e8
DIAL_DIVERGENCE_BOUND = 1e6
LOOPS = ("canonical", "dial", "gpu")  # gpu: canonical, but a diverged run keeps its train (§2.2)


@dataclass(frozen=True)
class Instance:
    """A planted low-rank sensing problem, y = A vec(X) with vec row-major; or several stacked
    along a leading dimension (A: (S, m, n²), y: (S, m), X: (S, n, n)), one per seed."""

    A: Tensor  # (m, n²) or (S, m, n²)
    y: Tensor  # (m,) or (S, m)
    X: Tensor  # (n, n) or (S, n, n)

    def stacked(self) -> Instance:
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


def make_tail_instance(n: int, rank: int, m: int, seed: int, tau: float) -> Instance:
    """A planted rank-``rank`` head plus a tail of amplitude ``tau`` (spec §1.4, Section 8): U*, V*,
    then a Gaussian E (an extra draw before A), E projected off U*'s column space and V*'s row
    space and scaled to the head's norm, X = sqrt(1 - tau²) X_r + tau E (tau²: the tail's share of
    the energy), then A. At tau = 0 X is the head, yet not Table 2's instance (A comes later)."""
    g = torch.Generator().manual_seed(seed)
    u = torch.randn(n, rank, generator=g) / math.sqrt(rank)
    v = torch.randn(n, rank, generator=g) / math.sqrt(rank)
    head = u @ v.T
    e = torch.randn(n, n, generator=g)
    q_u, q_v = torch.linalg.qr(u).Q, torch.linalg.qr(v).Q
    e = e - q_u @ (q_u.T @ e)
    e = e - (e @ q_v) @ q_v.T
    e = e / (torch.linalg.norm(e) + 1e-12) * torch.linalg.norm(head)
    x = math.sqrt(1.0 - tau * tau) * head + tau * e
    a = torch.randn(m, n * n, generator=g)
    return Instance(A=a, y=a @ x.reshape(-1), X=x)


def init_factors(n: int, k: int, scale: float, seed: int) -> tuple[Tensor, Tensor]:
    """U then V, each randn(n, k) * scale, from a generator seeded ``seed + 7`` (spec §1.3)."""
    g = torch.Generator().manual_seed(seed + 7)
    u = torch.randn(n, k, generator=g) * scale
    v = torch.randn(n, k, generator=g) * scale
    return u, v


GEMM_ROWS = 4  # under the numerics contract, blocks of a multiple of this many rows ...
GEMM_MIN_ROWS = 8  # ... and at least this many round every row alike


def padded_rows(count: int) -> int:
    """The rows a block of ``count`` runs is padded to (with zero rows) so that each run's row
    of the product with A has the bits it has alone. BLAS picks its kernel, and so its rounding,
    by the number of rows: under the portable numerics contract (MKL's COMPATIBLE branch, strict;
    see :mod:`gaugelab.core.runtime`), every block of GEMM_MIN_ROWS or more rows, a multiple of
    GEMM_ROWS, rounds each row alike at any thread count (measured on the testbeds' shapes and
    tested, tests/test_sensing.py). The native mode promises no independence of the grouping, so
    it multiplies no zero rows (on the 60x60 testbed's shards most of the product's rows were)."""
    if count == 0 or runtime.mode() == runtime.NATIVE:
        return count
    return max(GEMM_MIN_ROWS, count + (-count % GEMM_ROWS))


@dataclass(frozen=True)
class Layout:
    """Where each run of a batch sits in the product with A: its instance and its row within
    that instance's block. Under the portable mode each instance's block is padded with zero rows
    (:func:`padded_rows`), so every run's arithmetic is independent of which runs share its batch,
    and a batched run is bit-identical to the same run alone.

    On one thread each instance gets its own product (no rows padded up to the largest block,
    none for an instance without runs); on several, one batched product over equal blocks
    spreads the instances over the threads."""

    which: Tensor  # (B,) instance index of each run
    slot: Tensor   # (B,) row within the instance's block
    rows: tuple[int, ...]  # padded rows of each instance's block (0: no runs)
    dense: bool    # equal blocks that the runs fill in order, no padding: the batch is its own blocks
    starts: tuple[int, ...]  # first row of each instance's block, the blocks laid end to end
    position: Tensor  # (B,) each run's row in the blocks laid end to end
    # _times_a's blocks and products, kept from step to step: runs overwrite their own rows,
    # the padding rows stay zero.
    buffers: dict = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def of(cls, which: Tensor, instances: int = 1, separate: bool | None = None) -> Layout:
        """``separate``: one product per instance (default: when torch runs on one thread)."""
        which = which.to(torch.long)
        slot = torch.zeros_like(which)
        counts = [0] * instances
        for i, s in enumerate(which.tolist()):
            slot[i] = counts[s]
            counts[s] += 1
        if torch.get_num_threads() == 1 if separate is None else separate:
            rows = tuple(padded_rows(c) for c in counts)
        else:
            rows = (padded_rows(max(counts)),) * instances
        dense = rows == tuple(counts) and len(set(rows)) == 1 and bool((which[1:] >= which[:-1]).all())
        starts = tuple(sum(rows[:s]) for s in range(instances))
        return cls(which, slot, rows, dense, starts, torch.tensor(starts, dtype=torch.long)[which] + slot)

    @property
    def uniform(self) -> bool:
        return len(set(self.rows)) == 1


def _times_a(x: Tensor, layout: Layout, a: Tensor) -> Tensor:
    """Each run's row of ``x`` (B, d) times its instance's ``a`` (one of (S, d, e) per instance:
    A or its transpose), computed on the zero-padded blocks of ``layout``: a new (B, e) tensor.
    The blocks, the products and their per-instance views are made once per layout and shape."""
    count, instances = x.shape[0], len(layout.rows)
    if layout.dense:
        return torch.bmm(x.view(instances, layout.rows[0], -1), a).reshape(count, -1)
    if x.requires_grad or a.requires_grad:
        return _times_a_autograd(x, layout, a)
    key = (a.data_ptr(), a.stride(), x.shape[1])  # A or its transpose
    if key not in layout.buffers:
        blocks = x.new_zeros(instances, layout.rows[0], x.shape[1]) if layout.uniform else \
            x.new_zeros(sum(layout.rows), x.shape[1])
        products = x.new_empty(*blocks.shape[:-1], a.shape[2])
        pieces = [] if layout.uniform else [
            (blocks[None, lo : lo + rows], a[s : s + 1], products[None, lo : lo + rows])
            for s, (lo, rows) in enumerate(zip(layout.starts, layout.rows)) if rows]
        layout.buffers[key] = blocks, products, pieces
    blocks, products, pieces = layout.buffers[key]
    if layout.uniform:
        blocks[layout.which, layout.slot] = x
        return torch.bmm(blocks, a, out=products)[layout.which, layout.slot]
    blocks.index_copy_(0, layout.position, x)
    for block, a_block, product in pieces:  # one product per instance
        torch.bmm(block, a_block, out=product)
    return products.index_select(0, layout.position)


def _times_a_autograd(x: Tensor, layout: Layout, a: Tensor) -> Tensor:
    """:func:`_times_a` on fresh tensors, for a caller that differentiates through it (tests)."""
    if layout.uniform:
        blocks = x.new_zeros(len(layout.rows), layout.rows[0], x.shape[1]).index_put((layout.which, layout.slot), x)
        return torch.bmm(blocks, a)[layout.which, layout.slot]
    blocks = x.new_zeros(sum(layout.rows), x.shape[1]).index_put((layout.position,), x).split(layout.rows)
    return torch.cat([torch.bmm(b[None], a[s : s + 1])[0] for s, b in enumerate(blocks) if len(b)])[layout.position]


def _residual(inst: Instance, u: Tensor, v: Tensor, layout: Layout | None) -> tuple[Tensor, Layout]:
    inst = inst.stacked()
    if layout is None:
        layout = Layout.of(torch.zeros(u.shape[0], dtype=torch.long))
    w = (u @ v.mT).reshape(u.shape[0], -1)
    return _times_a(w, layout, inst.A.mT) - inst.y[layout.which], layout


def loss(inst: Instance, u: Tensor, v: Tensor, layout: Layout | None = None) -> Tensor:
    """Per-run mean squared residual, no ½: u, v are (B, n, k); returns (B,).

    ``inst`` may be one instance (every run uses it) or a stack; ``layout`` says which instance
    each run uses (default: all the first).
    """
    return _residual(inst, u, v, layout)[0].pow(2).mean(dim=1)


def loss_and_gradients(inst: Instance, u: Tensor, v: Tensor, layout: Layout) -> tuple[Tensor, Tensor, Tensor]:
    """:func:`loss` and its gradients in U and V, (B, n, k) each, written out without autograd.

    These are the operations autograd runs for the sum of the losses, in its order (the mean's
    backward divides by m, the square's multiplies by 2 r, the products' backward are the
    transposed products), so the bits are the same (tests/test_sensing.py) without a graph to
    build and walk at every step.
    """
    inst = inst.stacked()
    resid, layout = _residual(inst, u, v, layout)
    losses = resid.pow(2).mean(dim=1)
    dresid = (resid.new_ones(()) / resid.shape[1]) * (2.0 * resid)
    # + 0: autograd's backward of indexing accumulates into zeros, which turns -0 into +0
    dw = _times_a(dresid + 0.0, layout, inst.A).view(u.shape[0], u.shape[1], v.shape[1])
    return losses, dw.bmm(v), u.mT.bmm(dw).mT


def effective_rank(sigma: Tensor) -> Tensor:
    """Entropy effective rank of singular values (not their squares), with 1e-12 guards."""
    p = sigma / (sigma.sum(dim=-1, keepdim=True) + 1e-12)
    return portable.exp(-(p * portable.log(p + 1e-12)).sum(dim=-1))


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


def linear_factor(t: int, budget: int) -> float:
    """1 − t/T (the signum audit's "lin" anneal, spec §12), η_T = 0."""
    return 1.0 - t / budget


ANNEALS = {"cosine": cosine_factor, "linear": linear_factor}  # the shape of a decayed run's lr


class _Group:
    """The runs of a batch that share one update rule: their rows (one contiguous slice of the
    batch), learning rates and the rule's state. A stackable rule (optim.Rule.stackable) gets
    each run's U and V as one (b, 2, n, k) tensor, which halves its operations without changing
    its arithmetic; the others get them one by one, V's gradient in autograd's transposed layout."""

    def __init__(self, rule: optim.Rule, rows: slice, factors: Tensor, base_lr: Tensor, decayed: Tensor):
        self.rule, self.rows = rule, rows
        self._set_runs(base_lr, decayed)
        self.state = rule.init(self._params(factors))

    def _set_runs(self, base_lr: Tensor, decayed: Tensor) -> None:
        self.base_lr, self.decayed = base_lr, decayed
        # decided once here, not tested at every step
        self.schedule = "cosine" if decayed.all() else "const" if not decayed.any() else "mixed"

    def __len__(self) -> int:
        return len(self.base_lr)

    def _params(self, x: Tensor) -> list[Tensor]:
        x = x[self.rows]
        return [x] if self.rule.stackable else [x[:, 0], x[:, 1]]

    def _grads(self, grads: tuple[Tensor, Tensor, Tensor]) -> list[Tensor]:
        stacked, grad_u, grad_v = grads
        return [stacked[self.rows]] if self.rule.stackable else [grad_u[self.rows], grad_v[self.rows]]

    def _lr(self, factor: float) -> Tensor:
        if self.schedule == "const":
            return self.base_lr
        if self.schedule == "cosine":
            return self.base_lr * factor
        return torch.where(self.decayed, self.base_lr * factor, self.base_lr)

    def step(self, factors: Tensor, grads: tuple[Tensor, Tensor, Tensor], factor: float, t: int) -> None:
        """One update of the group's runs, added to ``factors`` in place. ``grads``: the stacked
        gradient (B, 2, n, k), and U's and V's as they come."""
        deltas, self.state = self.rule.update(self._grads(grads), self.state, self._lr(factor), t)
        for param, delta in zip(self._params(factors), deltas):
            param.add_(delta)

    def keep(self, mask: Tensor) -> None:
        """Drop the runs that left the batch (``mask``: which of the group's runs stay)."""
        if not mask.all():
            self.state = optim.select_runs(self.state, mask.nonzero().flatten())
            self._set_runs(self.base_lr[mask], self.decayed[mask])


def train(inst: Instance, rule: optim.Rule | list[optim.Rule], lrs: list[float], u0: Tensor, v0: Tensor, *,
          budget: int, decayed: bool | list[bool], tol: float = 1e-7, check_every: int = 200,
          perturbations: list[float] | None = None, which: list[int] | None = None,
          loop: str = "canonical", early_stop: bool = True, anneal: str = "cosine", progress=None,
          observe=None, observe_every: int = 0) -> list[RunResult]:
    """Run the canonical loop (spec §2.1), the dial loop or the GPU loop (§2.2) for every run at once.

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
    input order; each run's numbers are independent of the batch it ran in. ``progress`` (a
    :class:`gaugelab.core.progress.Progress`) hears of every step; it reads only the clock.
    ``anneal`` is the decayed runs' shape (:data:`ANNEALS`). ``observe(t, factors, runs, states)``,
    if given, sees every ``observe_every``-th step after its update: the batch's (B, 2, n, k)
    factors, the run of each row and each rule group's state (the signum audit's diagnostics); it
    must not change them.
    """
    if loop not in LOOPS:
        raise ValueError(f"unknown loop {loop!r}; use one of {LOOPS}")
    if anneal not in ANNEALS:
        raise ValueError(f"unknown anneal {anneal!r}; use one of {tuple(ANNEALS)}")
    anneal_factor = ANNEALS[anneal]
    dial = loop == "dial"
    inst = inst.stacked()
    count = len(lrs)
    rules = rule if isinstance(rule, list) else [rule] * count
    decays = decayed if isinstance(decayed, list) else [decayed] * count
    deltas = list(perturbations) if perturbations is not None else [0.0] * count
    if not len(rules) == len(decays) == len(deltas) == count:
        raise ValueError("rule, decayed and perturbations need one entry per run")
    u0 = u0.expand(count, *u0.shape[-2:])
    v0 = v0.expand(count, *v0.shape[-2:])
    # The batch's rows hold the runs group by group, so each group is one slice of the batch.
    distinct = list({id(r): r for r in rules}.values())
    members = [[run for run in range(count) if rules[run] is r] for r in distinct]
    order = [run for runs in members for run in runs]
    factors = torch.stack([torch.stack([u0[run] * (1.0 + deltas[run]) if deltas[run] else u0[run], v0[run]])
                           for run in order])  # (B, 2, n, k): U and V of each run
    groups, start = [], 0
    for r, runs in zip(distinct, members):
        rows = slice(start, start + len(runs))
        groups.append(_Group(r, rows, factors, torch.tensor([float(lrs[i]) for i in runs], dtype=torch.float64),
                             torch.tensor([bool(decays[i]) for i in runs])))
        start += len(runs)
    run_instance = torch.tensor(which if which is not None else [0] * count, dtype=torch.long)
    active = torch.tensor(order)  # original run id of each row of the batch
    active_ids = order
    layout = Layout.of(run_instance[active], inst.A.shape[0])
    curves: list[list[float]] = [[] for _ in range(count)]
    curve_steps: list[int] = []
    results: dict[int, RunResult] = {}

    def retire(rows: Tensor, t: int, train_loss: Tensor, status: str) -> None:
        if status == STATUS_DIVERGED:
            values = {key: [math.nan] * len(rows) for key in ("rec", "erank", "nuc", "bal")}
            final_train = train_loss[rows].tolist() if loop == "gpu" else [math.nan] * len(rows)
        else:
            # one run at a time: log/exp round by position in a vectorised kernel (see matrix_power)
            per_run = [metrics(inst.X[run_instance[active_ids[r]]], factors[r : r + 1, 0], factors[r : r + 1, 1])
                       for r in rows.tolist()]
            values = {key: [m[key].item() for m in per_run] for key in per_run[0]}
            final_train = train_loss[rows].tolist()
        for j, row in enumerate(rows.tolist()):
            run = active_ids[row]
            results[run] = RunResult(
                lr=lrs[run], perturbation=deltas[run], status=status, steps=t,
                train=final_train[j], rec=values["rec"][j], erank=values["erank"][j],
                nuc=values["nuc"][j], bal=values["bal"][j],
                curve_steps=curve_steps[: len(curves[run])], curve_loss=curves[run])

    no_divergence = torch.zeros(count, dtype=torch.bool)
    for t in range(1, budget + 1):
        if progress is not None:
            progress.update(t - 1, count - len(active_ids))
        train_loss, grad_u, grad_v = loss_and_gradients(inst, factors[:, 0], factors[:, 1], layout)
        grads = (torch.stack([grad_u, grad_v], dim=1), grad_u, grad_v)
        if t == 1 or t % check_every == 0 or t == budget:
            curve_steps.append(t)
            for run, value in zip(active_ids, train_loss.tolist()):
                curves[run].append(value)
        factor = anneal_factor(t, budget)
        for group in groups:
            group.step(factors, grads, factor, t)
        if observe is not None and t % observe_every == 0:
            observe(t, factors, active_ids, [(group.rows, group.state) for group in groups])
        diverged = None  # (None: no run diverged)
        if not dial:
            check_loss = train_loss
            if not bool((check_loss <= DIVERGENCE_BOUND).all()):  # one test settles the common case
                diverged = ~torch.isfinite(check_loss) | (check_loss > DIVERGENCE_BOUND)
        elif t % check_every == 0 or t == budget:
            check_loss = loss(inst, factors[:, 0], factors[:, 1], layout)  # post-update
            diverged = ~torch.isfinite(check_loss) | (check_loss > DIAL_DIVERGENCE_BOUND)
        checking = early_stop and t % check_every == 0
        if diverged is None:
            if not checking:
                continue
            diverged = no_divergence[: len(active_ids)]
        done = diverged.clone()
        if diverged.any():
            retire(diverged.nonzero().flatten(), t, check_loss, STATUS_DIVERGED)
        if checking:
            converged = ~diverged & (check_loss < tol)
            if converged.any():
                retire(converged.nonzero().flatten(), t, check_loss, STATUS_INTERPOLATED)
                done |= converged
        if done.any():
            keep = (~done).nonzero().flatten()
            if len(keep) == 0:
                break
            factors, active, check_loss = factors[keep], active[keep], check_loss[keep]
            active_ids = active.tolist()
            start = 0
            for group in groups:
                group.keep(~done[group.rows])
                group.rows = slice(start, start + len(group))
                start += len(group)
            groups = [g for g in groups if len(g)]
            layout = Layout.of(run_instance[active], inst.A.shape[0])
    else:
        rows = torch.arange(len(active_ids))
        interpolated = check_loss < tol
        for status, mask in ((STATUS_INTERPOLATED, interpolated), (STATUS_BUDGET, ~interpolated)):
            if mask.any():
                retire(rows[mask], budget, check_loss, status)
    if progress is not None:
        progress.finish(t)
    return [results[i] for i in range(count)]
