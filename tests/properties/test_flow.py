"""T19-T25: continuous-time identities (Thm 4.6, Prop A.4, Prop 8.1).

Flows use the engine's loss and autograd on θ = [vec U; vec V] and the engine's RK4 and Simpson
(gaugelab.sensing.flow); Prop 8.1 checks the engine's two-mode schedule model against its ODE and
against the displayed closed forms.
"""

from __future__ import annotations

import itertools
import math

import torch

from gaugelab.core import gauge
from gaugelab.sensing import flow

from .harness import BROKEN, EXACT, F64, grads, rel


def _flow(p, theta0, steps, t1, scale=None, t0=0.0):
    """RK4 of θ' = −∇L(θ)·scale(t) (scale a float, a function of t, or a vector) on [t0, t1]."""
    n, k = p.n, p.k

    def f(t, theta):
        g = flow.flat_gradient(p.inst, theta, n, k)
        if scale is None:
            return -g
        c = scale(t) if callable(scale) else scale
        return -c * g

    return flow.rk4(f, theta0, t0, t1, steps)


def test_thm46_time_change_direction(problem, factors):
    """T19: θ' = −∇L/a(t) on [0, T] lands on gradient flow at τ = ∫₀ᵀ du/a(u), not at ∫a."""
    p = problem(8)
    u0, v0 = factors(8)
    theta0 = flow.pack(u0, v0)
    big_t, steps = 1.3, 4000

    def a(t):
        return 1 + 0.5 * (torch.sin(t) ** 2 if isinstance(t, torch.Tensor) else math.sin(t) ** 2)

    theta_pre = _flow(p, theta0, steps, big_t, scale=lambda t: 1 / a(t))
    tau = flow.simpson(lambda t: 1 / a(t), 0.0, big_t, steps)
    tau_closed = math.sqrt(2 / 3) * math.atan(math.sqrt(1.5) * math.tan(big_t))
    assert abs(tau - tau_closed) < 1e-12
    assert abs(tau - 1.1005482) < 1e-7
    assert abs(tau - big_t) > 0.05
    theta_gf = _flow(p, theta0, steps, tau)
    assert rel(theta_pre, theta_gf) < 1e-8
    assert rel(theta_pre, theta0) > BROKEN  # the flow moved

    # control: the inverse time change τ = ∫a
    tau_wrong = flow.simpson(a, 0.0, big_t, steps)
    assert abs(tau_wrong - (5 * big_t / 4 - math.sin(2 * big_t) / 8)) < 1e-12
    assert abs(tau_wrong - 1.5605623) < 1e-7
    theta_wrong = _flow(p, theta0, steps, tau_wrong)
    assert rel(theta_pre, theta_wrong) > BROKEN


def test_propA4_balancedness(problem, factors):
    """T20: B = UᵀU − VᵀV is conserved by the common-scalar flow, drifts at −(α−β)S otherwise."""
    p = problem(12)
    u0, v0 = factors(12)
    n, k = p.n, p.k
    gu, gv = grads(p.inst, u0, v0)
    # algebraic fact Uᵀ∇_U L = (∇_V L)ᵀ V, and the transpose mix-up as control
    assert rel(u0.T @ gu, gv.T @ v0) < EXACT
    assert rel(u0.T @ gu, v0.T @ gv) > BROKEN

    b0 = gauge.balance(u0, v0)
    theta0 = flow.pack(u0, v0)
    for scale in (lambda t: 1.0, lambda t: 1 / (2 + (torch.cos(t) if isinstance(t, torch.Tensor) else math.cos(t)))):
        theta_t = _flow(p, theta0, 3000, 2.0, scale=scale)
        u_t, v_t = flow.unpack(theta_t, n, k)
        assert rel(gauge.balance(u_t, v_t), b0) < 1e-8
        assert rel(theta_t, theta0) > BROKEN

    # drift law: the directional derivative of B along (−α∇_U L, −β∇_V L) is −(α − β)S
    alpha, beta = 3.0, 1.0
    # autograd JVP (double-backward trick) through the engine's balance matrix
    _, d_b = torch.autograd.functional.jvp(gauge.balance, (u0, v0), (-alpha * gu, -beta * gv))
    s = u0.T @ gu + gu.T @ u0
    assert rel(d_b, -(alpha - beta) * s) < EXACT
    assert float(torch.linalg.matrix_norm(s)) > BROKEN  # the drift is not trivially zero

    # control: the anisotropic flow D = 3 on U, 1 on V drifts B
    d = torch.cat([torch.full((n * k,), 3.0, dtype=F64), torch.ones(n * k, dtype=F64)])
    theta_d = _flow(p, theta0, 3000, 2.0, scale=d)
    u_d, v_d = flow.unpack(theta_d, n, k)
    assert rel(gauge.balance(u_d, v_d), b0) > 1e-2


def test_prop81_greedy_closed_form():
    """T21: the greedy logistic closed form solves ẇ = 2ηw(s − w) (RK4, 20000 steps)."""
    cells = list(itertools.product([(1.0, 1e-3, 0.7), (0.4, 1e-5, 2.0), (2.5, 0.1, 0.3)],
                                   [0.5, 2.0, 6.0]))
    s = torch.tensor([c[0][0] for c in cells], dtype=F64)
    w0 = torch.tensor([c[0][1] for c in cells], dtype=F64)
    eta = torch.tensor([c[0][2] for c in cells], dtype=F64)
    big_t = torch.tensor([c[1] for c in cells], dtype=F64)
    # each component is its own 1-element ODE with its own h = T/20000, integrated side by side
    w_ode = flow.rk4(lambda t, w: flow.greedy_velocity(w, s, eta), w0.clone(),
                       torch.zeros_like(big_t), big_t, 20000)
    closed = s / (1 + (s / w0 - 1) * torch.exp(-2 * eta * s * big_t))
    engine = flow.greedy(s, w0, eta, big_t)
    assert float(((w_ode - closed) / closed).abs().max()) < 1e-9
    assert float(((engine - closed) / closed).abs().max()) < 1e-13
    for i, ((si, wi, ei), ti) in enumerate(cells):  # the float path of the engine model
        assert abs(flow.greedy(si, wi, ei, ti) - float(closed[i])) / float(closed[i]) < 1e-13
    # control: the wrong rate e^{−ηsT}
    wrong = s / (1 + (s / w0 - 1) * torch.exp(-eta * s * big_t))
    assert float(((w_ode - wrong) / wrong).abs().min()) > 1e-2


def _grid_t22():
    for s1, rho, w0, delta in itertools.product([1.0, 3.0], [0.2, 0.5, 0.8],
                                                [1e-6, 1e-4, 1e-2], [0.05, 0.2, 0.5]):
        s2 = rho * s1
        if w0 > s2 / 2 or not 0 < delta < 1 - rho:
            continue
        yield s1, rho, s2, w0, delta


def test_prop81_greedy_tail_bound():
    """T22: at greedy head fit the tail is below C_{δ,ρ} s₁ (w₀/s₁)^{1−ρ}, a non-vacuous bound
    that the equal-rate tail (= s₂) violates."""
    eta = 1.0
    cells = list(_grid_t22())
    assert len(cells) == 36 and len(cells) >= 10
    violations, must_violate = 0, 0
    for s1, rho, s2, w0, delta in cells:
        t1 = flow.greedy_head_fit_time(s1, w0, delta, eta)
        closed_t1 = math.log((1 - delta) / delta * (s1 - w0) / w0) / (2 * eta * s1)
        assert abs(t1 - closed_t1) <= 1e-15 * closed_t1
        assert abs(flow.greedy(s1, w0, eta, t1) - (1 - delta) * s1) < 1e-9 * s1
        bound = flow.greedy_tail_bound(s1, rho, w0, delta)
        assert abs(bound - 2 * ((1 - delta) / delta) ** rho * s1 * (w0 / s1) ** (1 - rho)) <= 1e-15 * bound
        assert flow.greedy(s2, w0, eta, t1) <= bound + 1e-12
        assert bound < 10 * s1
        # control: the equal-rate tail, s₂, in the same inequality
        violated = not (s2 <= bound + 1e-12)
        violations += violated
        if rho <= 0.5 and w0 <= 1e-4:
            must_violate += 1
            assert violated, (s1, rho, w0, delta)
    assert must_violate == 20
    assert violations >= 20


def test_prop81_greedy_tail_vanishes():
    """T23: the greedy tail at head fit shrinks with the init (≥ 5× per decade²); equal-rate's
    does not."""
    eta, s1, s2, delta = 1.0, 1.0, 0.5, 0.2
    inits = [1e-2, 1e-4, 1e-6, 1e-8]

    def shrinking(tails):
        return all(b < a / 5 for a, b in zip(tails, tails[1:])) and tails[-1] < 1e-3 * s2

    greedy_tails = [flow.greedy(s2, w0, eta, flow.greedy_head_fit_time(s1, w0, delta, eta))
                    for w0 in inits]
    assert shrinking(greedy_tails)
    equal_tails = [flow.equal_rate(s2, w0, eta, flow.equal_rate_head_fit_time(s1, w0, delta, eta))
                   for w0 in inits]
    assert all(abs(t - s2) < 1e-12 * s2 for t in equal_tails)
    assert not shrinking(equal_tails)  # control


def test_prop81_equal_rate_fits_tail():
    """T24: under δ < 1 − ρ the equal-rate tail is capped (= s₂) before the head fits, any w₀;
    the hypothesis is necessary."""
    eta = 1.0
    checked = 0
    for s1, rho, delta, w0 in itertools.product([1.0, 4.0], [0.2, 0.6, 0.9], [0.01, 0.05],
                                                [1e-8, 1e-4, 1e-2]):
        s2 = rho * s1
        if not delta < 1 - rho or w0 > s2 / 2:
            continue
        checked += 1
        t1 = flow.equal_rate_head_fit_time(s1, w0, delta, eta)
        t2 = flow.equal_rate_cap_time(s2, w0, eta)
        assert abs((math.sqrt(w0) + eta * t1) ** 2 - (1 - delta) * s1) < 1e-12 * s1
        assert abs((math.sqrt(w0) + eta * t2) ** 2 - s2) < 1e-12 * s2
        assert t2 < t1
        assert abs(min(s2, (math.sqrt(w0) + eta * t1) ** 2) - s2) < 1e-12 * s2
        assert abs(flow.equal_rate(s2, w0, eta, t1) - s2) < 1e-12 * s2
        assert abs(flow.equal_rate(s1, w0, eta, t1) - (1 - delta) * s1) < 1e-12 * s1
    assert checked >= 10
    # control: δ_bad = 1 − s₂/s₁ + 0.2 violates the hypothesis, and the tail is not yet fit
    s1, s2, w0 = 1.0, 0.5, 1e-6
    delta_bad = 1 - s2 / s1 + 0.2
    t1 = flow.equal_rate_head_fit_time(s1, w0, delta_bad, eta)
    t2 = flow.equal_rate_cap_time(s2, w0, eta)
    head = (math.sqrt(w0) + eta * t1) ** 2
    assert abs(head - 0.3) < 1e-12
    assert not t2 < t1
    assert not abs(min(s2, head) - s2) < 1e-12 * s2
    assert abs(flow.equal_rate(s2, w0, eta, t1) - 0.3) < 1e-12


def test_prop81_schedules_disagree():
    """T25: at greedy head fit the greedy tail is < 2% of the equal-rate tail (small init only)."""
    eta, s1, s2, delta = 1.0, 1.0, 0.5, 0.2

    def check(w0):
        t1 = flow.greedy_head_fit_time(s1, w0, delta, eta)
        assert abs(t1 - math.log(4 * (1 - w0) / w0) / 2) < 1e-14 * t1
        greedy_tail = flow.greedy(s2, w0, eta, t1)
        equal_tail = flow.equal_rate(s2, w0, eta, flow.equal_rate_head_fit_time(s1, w0, delta, eta))
        assert abs(equal_tail - s2) < 1e-12
        return greedy_tail, greedy_tail < 0.02 * equal_tail

    t1 = flow.greedy_head_fit_time(s1, 1e-6, delta, eta)
    assert abs(t1 - 7.6009) < 1e-4
    tail, ok = check(1e-6)
    assert ok
    assert abs(tail - 1.99e-3) < 1e-5
    tail, ok = check(0.1)  # control: a large init
    assert abs(tail - 0.3) < 1e-12
    assert not ok
