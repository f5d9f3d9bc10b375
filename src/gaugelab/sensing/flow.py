"""Continuous-time side of the paper (spec: identities.md §4, Thm 4.6, Prop A.4, Prop 8.1).

Two things live here so that the analysis and the property suite use one definition each:

* the flow machinery: the flattened parameter vector θ = [vec U; vec V] (row-major, U first),
  its autograd gradient through the engine's sensing loss, a classical fixed-step RK4 and a
  composite Simpson rule (the time change τ = ∫ du / a(u) of Thm 4.6);
* the two-mode schedule model of Prop 8.1, which the spectral-tail phase diagram is read
  against: the greedy (logistic) and equal-rate (flat-transfer) closed forms and their
  head-fit / tail-cap times.

Everything accepts Python floats or float64 tensors (elementwise), so a grid of cells can be
evaluated or integrated as one tensor.
"""

from __future__ import annotations

import math

import torch
from collections.abc import Callable
from torch import Tensor

from ..core import portable
from . import testbed

Number = "float | Tensor"  # annotation alias: floats or float64 tensors, elementwise


def _exp(x):
    return portable.exp(x) if isinstance(x, Tensor) else math.exp(x)


def _log(x):
    return portable.log(x) if isinstance(x, Tensor) else math.log(x)


def _sqrt(x):
    return portable.sqrt(x) if isinstance(x, Tensor) else math.sqrt(x)


# --- flows on the sensing problem ---------------------------------------------------------------


def pack(u: Tensor, v: Tensor) -> Tensor:
    """θ = [vec U; vec V], row-major, U first (u, v are n×k)."""
    return torch.cat([u.reshape(-1), v.reshape(-1)])


def unpack(theta: Tensor, n: int, k: int) -> tuple[Tensor, Tensor]:
    """Inverse of :func:`pack`."""
    return theta[: n * k].reshape(n, k), theta[n * k:].reshape(n, k)


def flat_gradient(inst: testbed.Instance, theta: Tensor, n: int, k: int) -> Tensor:
    """∇L(θ) by autograd through the engine's loss, evaluated on the split (U, V)."""
    u, v = (x.detach().clone().requires_grad_(True)[None] for x in unpack(theta, n, k))
    gu, gv = torch.autograd.grad(testbed.loss(inst, u, v).sum(), [u, v])
    return pack(gu[0], gv[0])


def rk4(f: Callable[[Number, Tensor], Tensor], y0: Tensor, t0: Number, t1: Number,
        steps: int) -> Tensor:
    """Classical fixed-step RK4 of y' = f(t, y) on [t0, t1] with h = (t1 - t0) / steps.

    Stages at t, t + h/2, t + h/2, t + h with weights 1/6, 2/6, 2/6, 1/6. ``t0``/``t1`` may be
    tensors broadcasting against ``y0``: then each component is its own ODE with its own h.
    """
    h = (t1 - t0) / steps
    half = h / 2
    y = y0
    for i in range(steps):
        t = t0 + i * h
        k1 = f(t, y)
        k2 = f(t + half, y + half * k1)
        k3 = f(t + half, y + half * k2)
        k4 = f(t + h, y + h * k3)
        y = y + (h / 6) * (k1 + 2 * k2 + 2 * k3 + k4)
    return y


def simpson(f: Callable[[Tensor], Tensor], a: float, b: float, panels: int) -> float:
    """Composite Simpson: ``panels`` panels of width h, each weighted (h/6)(1, 4, 1)."""
    h = (b - a) / panels
    nodes = a + h * torch.arange(panels + 1, dtype=torch.float64)
    mids = nodes[:-1] + h / 2
    fn, fm = f(nodes), f(mids)
    return float((h / 6) * (fn[:-1].sum() + 4 * fm.sum() + fn[1:].sum()))


# --- Prop 8.1: the two-mode schedule model ------------------------------------------------------


def greedy_velocity(w, s, eta):
    """Greedy (gradient-flow-like) mode dynamics ẇ = 2ηw(s − w)."""
    return 2 * eta * w * (s - w)


def greedy(s, w0, eta, t):
    """Logistic solution w(t) = s / (1 + (s/w0 − 1) e^{−2ηst})."""
    return s / (1 + (s / w0 - 1) * _exp(-2 * eta * s * t))


def greedy_head_fit_time(s1, w0, delta, eta):
    """T₁ at which the greedy head reaches (1 − δ)s₁: ln(((1−δ)/δ)(s₁ − w₀)/w₀) / (2ηs₁)."""
    return _log((1 - delta) / delta * (s1 - w0) / w0) / (2 * eta * s1)


def greedy_tail_bound(s1, rho, w0, delta):
    """C_{δ,ρ} s₁ (w₀/s₁)^{1−ρ} with C_{δ,ρ} = 2((1−δ)/δ)^ρ: the greedy tail at head fit is
    below this for 0 < w₀ ≤ s₂/2 (s₂ = ρs₁)."""
    return 2 * ((1 - delta) / delta) ** rho * s1 * (w0 / s1) ** (1 - rho)


def equal_rate(s, w0, eta, t):
    """Equal-rate (flat-transfer, Muon-like) mode: √w grows at rate η, capped at s."""
    grown = (_sqrt(w0) + eta * t) ** 2
    return torch.minimum(torch.as_tensor(s, dtype=torch.float64), grown) \
        if isinstance(grown, Tensor) else min(s, grown)


def equal_rate_head_fit_time(s1, w0, delta, eta):
    """T₁ = (√((1−δ)s₁) − √w₀)/η: the equal-rate head reaches (1 − δ)s₁."""
    return (_sqrt((1 - delta) * s1) - _sqrt(w0)) / eta


def equal_rate_cap_time(s, w0, eta):
    """t = (√s − √w₀)/η: the equal-rate mode reaches its target s and stops."""
    return (_sqrt(s) - _sqrt(w0)) / eta
