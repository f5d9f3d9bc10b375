"""The matrix-sensing testbed (spec: sensing.md §1, §5): instances, initial factors, the loss and
its gradients over a batch of runs, and the metrics. The run loops that drive it are
:mod:`.loop`'s."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch import Tensor

from ..core import gauge, portable, runtime


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
