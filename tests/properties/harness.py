"""Fixture implementations and generic numerics for the property suite (identities.md §1-§2).

Nothing here implements an update rule: rules come from ``gaugelab.optim`` by name and are
driven functionally (explicit state in, increments and new state out). What is here is the
spec's fixtures (Problem, Factors, rand_orthogonal, the driver), the comparison ``rel`` and
the generic numerics a test may own (pseudoinverse, spectral calculus on the support).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import torch
from torch import Tensor

from gaugelab import optim
from gaugelab.sensing import testbed

F64 = torch.float64
EXACT, LOOSE, BROKEN = 1e-11, 1e-9, 1e-3

# Spec §2: Factors(seed) draws from a generator seeded seed + 7919; the engine's constructor
# seeds its generator with seed + 7, so it is called with seed + 7912.
FACTORS_OFFSET = 7919
ENGINE_FACTORS_OFFSET = 7
ORTHOGONAL_OFFSET = 104729


def rel(a: Tensor, b: Tensor) -> float:
    """rel(a, b) = ‖a − b‖ / max(‖b‖, 1e-300); b is the comparison target."""
    a, b = torch.as_tensor(a, dtype=F64), torch.as_tensor(b, dtype=F64)
    return float(torch.linalg.vector_norm(a - b) / max(float(torch.linalg.vector_norm(b)), 1e-300))


def gen(seed: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def randn(*shape: int, generator: torch.Generator) -> Tensor:
    return torch.randn(*shape, generator=generator, dtype=F64)


@dataclass(frozen=True)
class Problem:
    """P(seed): the engine's planted sensing instance, drawn in float64."""

    inst: testbed.Instance
    n: int
    k: int
    r: int
    m: int
    seed: int


def make_problem(seed: int, n: int = 6, k: int = 3, r: int = 2, m: int = 20) -> Problem:
    """U*, V* (N(0,1)/√r), then A (N(0,1)) from one generator seeded ``seed`` (the engine's
    constructor, which draws in the default dtype; the suite runs it under float64)."""
    assert torch.get_default_dtype() == F64, "the property suite must draw in float64"
    inst = testbed.make_instance(n, r, m, seed)
    assert inst.A.dtype == F64 and inst.y.dtype == F64
    return Problem(inst, n, k, r, m, seed)


def make_factors(seed: int, n: int = 6, k: int = 3, scale: float = 0.3) -> tuple[Tensor, Tensor]:
    """F(seed): U then V, each scale·N(0,1)^{n×k}, generator seeded seed + 7919."""
    assert torch.get_default_dtype() == F64
    u, v = testbed.init_factors(n, k, scale, seed + FACTORS_OFFSET - ENGINE_FACTORS_OFFSET)
    assert u.dtype == F64
    return u, v


def rand_orthogonal(k: int, seed: int) -> Tensor:
    """Haar on O(k): QR of a k×k Gaussian (generator seeded seed + 104729), signs fixed by R."""
    m = randn(k, k, generator=gen(seed + ORTHOGONAL_OFFSET))
    q, r = torch.linalg.qr(m)
    return q * torch.sign(torch.diagonal(r)).unsqueeze(0)


def perturbed_identity(k: int, seed: int = 2) -> Tensor:
    """B = I + 0.4N: a generic invertible, non-orthogonal k×k matrix (the GL controls)."""
    return torch.eye(k, dtype=F64) + 0.4 * randn(k, k, generator=gen(seed))


def grads(inst: testbed.Instance, u: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
    """Autograd gradients of the engine loss at (U, V), on detached clones.

    Accepts n×k factors (a run dimension is added and removed) or (B, n, k) factors.
    """
    single = u.dim() == 2
    uu = (u[None] if single else u).detach().clone().requires_grad_(True)
    vv = (v[None] if single else v).detach().clone().requires_grad_(True)
    gu, gv = torch.autograd.grad(testbed.loss(inst, uu, vv).sum(), [uu, vv])
    return (gu[0], gv[0]) if single else (gu, gv)


@dataclass
class Trace:
    """One driver run: final factors (n×k) and, per step, gradients, increments and state."""

    u: Tensor
    v: Tensor
    grads: list[tuple[Tensor, Tensor]] = field(default_factory=list)
    deltas: list[tuple[Tensor, Tensor]] = field(default_factory=list)
    states: list[dict] = field(default_factory=list)


def make_rule(rule: str | optim.Rule, **hparams) -> optim.Rule:
    return optim.make(rule, **hparams) if isinstance(rule, str) else rule


def run(inst: testbed.Instance, rule: str | optim.Rule, u0: Tensor, v0: Tensor, lr: float,
        steps: int, **hparams) -> Trace:
    """Driver (spec §2): deep copies, fresh empty state, autograd gradients at the current point,
    the whole list [g_U, g_V] to the rule, increments added. t starts at 1."""
    rule = make_rule(rule, **hparams)
    u = copy.deepcopy(u0.detach())[None]
    v = copy.deepcopy(v0.detach())[None]
    state = rule.init([u, v])
    trace = Trace(u, v)
    for t in range(1, steps + 1):
        gu, gv = grads(inst, u, v)
        (du, dv), state = rule.update([gu, gv], state, lr, t)
        assert du.dtype == F64 and dv.dtype == F64, f"{rule.name} downcast its increments"
        assert du.shape == u.shape and dv.shape == v.shape
        u, v = u + du, v + dv
        trace.grads.append((gu[0], gv[0]))
        trace.deltas.append((du[0], dv[0]))
        trace.states.append(state)
    trace.u, trace.v = u[0], v[0]
    return trace


def direction(rule: str | optim.Rule, g: Tensor, **hparams) -> Tensor:
    """−Δ/η of one fresh-state step (η = 1, t = 1) of an engine rule on a single matrix G."""
    rule = make_rule(rule, **hparams)
    gg = g.detach().clone()[None]
    (delta,), _ = rule.update([gg], rule.init([gg]), 1.0, 1)
    assert delta.dtype == F64
    return -delta[0]


def spectral_on_support(m: Tensor, psi, tol: float = 1e-10) -> Tensor:
    """The paper's spectral calculus on the support: eigendecompose, keep eigenvalues > tol,
    apply ψ to those only (no clamp, no symmetrisation)."""
    evals, evecs = torch.linalg.eigh(m)
    keep = evals > tol
    vecs = evecs[:, keep]
    return (vecs * psi(evals[keep]).unsqueeze(0)) @ vecs.T


def clamped_root(m: Tensor, p: float = -0.25, floor: float = 1e-6) -> Tensor:
    """A spectral power written in the test (symmetrise, eigh, clamp, power): the displayed
    Shampoo formula's root in T17, independent of the engine's matrix_power."""
    m = 0.5 * (m + m.T)
    evals, evecs = torch.linalg.eigh(m)
    return (evecs * evals.clamp_min(floor).pow(p).unsqueeze(0)) @ evecs.T
