"""T4-T11, T17: the engine's update rules against the gauge (Prop 4.2, 4.3, 4.4).

Every rule is the engine's (``optim.make``), driven through the shared driver; a test only
writes closed-form sides (D_ε, the defect formula, witness matrices, the displayed Shampoo rule).
"""

from __future__ import annotations

import math

import pytest
import torch

from gaugelab import optim
from gaugelab.core import gauge
from gaugelab.sensing import testbed

from .harness import (BROKEN, EXACT, F64, LOOSE, clamped_root, direction, grads, rel)

# Shampoo's roots are refreshed every step in the property tests (sensing.md §18.12).
HPARAMS = {"shampoo": {"refresh": 1}}


def _pair(driver, p, u0, v0, q, rule, lr, steps, **hp):
    """Base run from (U0, V0) and rotated run from (U0Q, V0Q), each with fresh state."""
    hp = {**HPARAMS.get(rule, {}), **hp}
    base = driver(p.inst, rule, u0, v0, lr, steps, **hp)
    ur, vr = gauge.gauge_action(u0, v0, q)
    rot = driver(p.inst, rule, ur, vr, lr, steps, **hp)
    return base, rot


@pytest.mark.parametrize("rule", ["gd", "momentum", "muon", "scalar_adam", "shampoo"])
def test_prop42_equivariant_rules_commute(rule, driver, problem, factors, rand_orthogonal):
    """T4: an equivariant rule run from (U0Q, V0Q) stays at (U_tQ, V_tQ) for 6 steps."""
    assert optim.make(rule).equivariant
    p = problem(0)
    u0, v0 = factors(0)
    q = rand_orthogonal(p.k, 13)
    base, rot = _pair(driver, p, u0, v0, q, rule, 3e-2, 6)
    assert rel(rot.u, base.u @ q) < LOOSE
    assert rel(rot.v, base.v @ q) < LOOSE
    assert rel(gauge.product(rot.u, rot.v), gauge.product(base.u, base.v)) < LOOSE
    assert rel(rot.u, base.u) > BROKEN  # non-vacuity: Q is not ≈ I and was applied
    assert rel(base.u, u0) > BROKEN  # the run moved

    adam_base, adam_rot = _pair(driver, p, u0, v0, q, "adam", 3e-2, 6)
    assert rel(adam_rot.u, adam_base.u @ q) > BROKEN  # control: same path, coordinate-wise rule


@pytest.mark.parametrize("rule", ["adafactor", "adam", "lion", "rmsprop", "signum"])
def test_prop43_coordinatewise_rules_break_at_step1(rule, driver, problem, factors, rand_orthogonal):
    """T5: a coordinate-wise rule leaves the orbit at step one, and the product itself moves."""
    assert not optim.make(rule).equivariant
    p = problem(0)
    u0, v0 = factors(0)
    q = rand_orthogonal(p.k, 13)
    base, rot = _pair(driver, p, u0, v0, q, rule, 3e-2, 1)
    assert rel(rot.u, base.u @ q) > BROKEN
    assert rel(gauge.product(rot.u, rot.v), gauge.product(base.u, base.v)) > 1e-9

    eye = torch.eye(p.k, dtype=F64)  # control: Q = I through the identical path
    base_i, rot_i = _pair(driver, p, u0, v0, eye, rule, 3e-2, 1)
    assert rel(rot_i.u, base_i.u @ eye) == 0.0
    assert rel(rot_i.v, base_i.v @ eye) == 0.0
    assert rel(base_i.u, base.u) == 0.0  # a rerun is bit-identical: no leaked state


def test_prop42_scalar_adam_repairs_adam(driver, problem, factors, rand_orthogonal):
    """T6: scalar-Adam (one pooled denominator) commutes; Adam (entrywise) does not."""
    p = problem(0)
    u0, v0 = factors(0)
    q = rand_orthogonal(p.k, 13)
    err = {}
    for rule in ("scalar_adam", "adam"):
        base, rot = _pair(driver, p, u0, v0, q, rule, 3e-2, 4)
        err[rule] = rel(rot.u, base.u @ q)
    assert err["scalar_adam"] < LOOSE < BROKEN < err["adam"]


def _pool_mean(xs) -> float:
    return float(sum(x.sum() for x in xs) / sum(x.numel() for x in xs))


def _used_scalar(mhat: list, deltas: list, lr: float, eps: float) -> float:
    """The √ν̂ scalar-Adam actually divided by, read back from its increments: Δ = −η m̂/(s + ε)."""
    num = sum(float((m * m).sum()) for m in mhat)
    den = sum(float((m * d).sum()) for m, d in zip(mhat, deltas))
    return -lr * num / den - eps


def test_prop42_scalar_ema_is_mean_of_entrywise_ema(driver, problem, factors):
    """T7: scalar-Adam's scalar is the pool mean (over both factors) of Adam's entrywise EMA."""
    beta1, beta2, eps = optim.BETA1, optim.BETA2, optim.EPS
    # Part A: the same gradient stream into both states, the point moved by plain GD.
    p = problem(0)
    u, v = factors(0)
    adam, sadam, gd = optim.make("adam"), optim.make("scalar_adam"), optim.make("gd")
    sa = adam.init([u[None], v[None]])
    ss = sadam.init([u[None], v[None]])
    for t in range(1, 16):
        gu, gv = grads(p.inst, u[None], v[None])
        _, sa = adam.update([gu, gv], sa, 0.03, t)
        _, ss = sadam.update([gu, gv], ss, 0.03, t)
        (du, dv), _ = gd.update([gu, gv], {}, 0.03, t)
        u, v = u + du[0], v + dv[0]
        nu_entrywise = _pool_mean(sa["v"])
        nu_state = _pool_mean(ss["v"])
        assert abs(nu_state - nu_entrywise) / nu_entrywise < 1e-13

    # Part B: the engine's scalar against a pooled EMA the test keeps from the same gradients.
    def part_b(u0, v0):
        tr = driver(p3.inst, "scalar_adam", u0, v0, 1e-2, 5)
        nu_pool = nu_u = 0.0
        worst = 0.0
        for t, ((gu, gv), (du, dv), st) in enumerate(zip(tr.grads, tr.deltas, tr.states), 1):
            nu_pool = beta2 * nu_pool + (1 - beta2) * float(torch.cat([gu.reshape(-1), gv.reshape(-1)]).pow(2).mean())
            nu_u = beta2 * nu_u + (1 - beta2) * float(gu.pow(2).mean())
            nu_state = _pool_mean(st["v"])
            worst = max(worst, abs(nu_state - nu_pool) / nu_pool)
            # the scalar the update really used: s = √(ν/(1 − β2^t))
            mhat = [m / (1 - beta1**t) for m in st["m"]]
            s = _used_scalar(mhat, [du[None], dv[None]], 1e-2, eps)
            nu_used = s * s * (1 - beta2**t)
            worst = max(worst, abs(nu_used - nu_pool) / nu_pool)
        return worst, nu_state, nu_u

    p3 = problem(3)
    u0, v0 = factors(3)
    worst, _, _ = part_b(u0, v0)
    assert worst < 1e-13
    # control: the product is unchanged but the factors are unbalanced 3:1/3
    worst, nu_state, nu_u = part_b(3 * u0, v0 / 3)
    assert worst < 1e-13
    assert abs(nu_u - nu_state) / nu_state > 0.5  # a U-only pool would be caught


def test_prop43_sign_witness():
    """T8: sign(GQ) ≠ sign(G)Q at θ = π/4, through the engine's signum and Lion first steps."""
    c = s = 1 / math.sqrt(2)
    assert c - s == 0.0
    q = torch.tensor([[c, s], [-s, c]], dtype=F64)
    g = torch.tensor([[1.0, 1.0]], dtype=F64)
    gq = g @ q
    assert rel(gq, torch.tensor([[0.0, math.sqrt(2)]], dtype=F64)) < EXACT
    for rule in ("signum", "lion"):
        sign_gq = direction(rule, gq)
        sign_g_q = direction(rule, g) @ q
        assert rel(sign_gq, torch.tensor([[0.0, 1.0]], dtype=F64)) < EXACT
        assert rel(sign_g_q, torch.tensor([[0.0, math.sqrt(2)]], dtype=F64)) < EXACT
        gap = float(torch.linalg.vector_norm(sign_gq - sign_g_q))
        assert gap > 0.4
        assert abs(gap - (math.sqrt(2) - 1)) < EXACT
    # control: the flat but equivariant map msign commutes on the same witness
    assert rel(gauge.msign(gq), gauge.msign(g) @ q) < EXACT


def test_prop43_adafactor_witness():
    """T9: Adafactor's factored direction (ε terms 0) on G = diag(1, e) and its rotation."""
    beta2 = optim.BETA2
    kappa = 1 / math.sqrt(1 - beta2)  # no bias correction: the first step is κ·AF(G)
    r2 = 1 / math.sqrt(2)
    q = torch.tensor([[r2, r2], [-r2, r2]], dtype=F64)
    rule = optim.make("adafactor", eps=0.0, tiny=0.0)

    def af(g):
        gg = g[None].clone()
        (delta,), st = rule.update([gg], rule.init([gg]), 1.0, 1)
        rows = st["R"][0] * g.shape[1] / (1 - beta2)  # row sums of G⊙G, from the engine state
        cols = st["C"][0] * g.shape[0] / (1 - beta2)  # column sums
        return -delta[0] / kappa, rows, cols

    for e in (0.1, 0.3, 0.5, 2.0):
        g = torch.diag(torch.tensor([1.0, e], dtype=F64))
        rho = math.sqrt(1 + e * e)
        af_g, rows_g, cols_g = af(g)
        af_gq, rows_gq, cols_gq = af(g @ q)
        assert rel(af_g, rho * torch.diag(torch.tensor([1.0, 1 / e], dtype=F64))) < EXACT
        assert rel(af_gq, torch.tensor([[1.0, 1.0], [-1.0, 1.0]], dtype=F64)) < EXACT
        expect = rho / math.sqrt(2) * torch.tensor([[1.0, 1.0], [-1 / e, 1 / e]], dtype=F64)
        assert rel(af_g @ q, expect) < EXACT
        assert rel(rows_g, torch.tensor([1.0, e * e], dtype=F64)) < EXACT
        assert rel(rows_gq, rows_g) < EXACT
        item5 = 0.5 * (1 + e * e) * torch.ones(2, dtype=F64)
        assert rel(cols_gq, item5) < EXACT
        # control: the break, and the column sums that Q mixes
        assert rel(af_gq, af_g @ q) > 0.3
        assert rel(cols_g, torch.tensor([1.0, e * e], dtype=F64)) < EXACT
        assert float((cols_g - item5).abs().max()) > 0.3


def _d_eps(g, eps):
    """D_ε(G) = G ⊘ (|G| + ε), the closed form of Adam's zero-state first direction."""
    return g / (g.abs() + eps)


@pytest.mark.parametrize("eps", [1e-8, 1e-3, 0.1], ids=lambda x: f"eps={x:g}")
@pytest.mark.parametrize("lr", [1e-3, 0.05, 0.7], ids=lambda x: f"eta={x:g}")
def test_prop44_first_step_defect(lr, eps, driver, problem, factors, rand_orthogonal):
    """T10: the exact first-step product defect of Adam under the gauge (Prop 4.4)."""
    p = problem(4)
    u0, v0 = factors(4)
    q = rand_orthogonal(p.k, 21)
    base, rot = _pair(driver, p, u0, v0, q, "adam", lr, 1, eps=eps)
    g_u, g_v = base.grads[0]
    # pin: the engine's first Adam step is −η D_ε(g)
    assert rel(base.deltas[0][0], -lr * _d_eps(g_u, eps)) < 1e-13
    assert rel(base.deltas[0][1], -lr * _d_eps(g_v, eps)) < 1e-13

    w1 = gauge.product(base.u, base.v)
    w1_rot = gauge.product(rot.u, rot.v)
    diff = w1_rot - w1
    assert float(torch.linalg.vector_norm(diff)) > 1e-8

    def rhs(e_u, e_v, d_u, d_v, second_form=False):
        first = -lr * (e_u @ v0.T + u0 @ e_v.T)
        if second_form:
            bracket = _d_eps(g_u @ q, eps) @ _d_eps(g_v @ q, eps).T - d_u @ d_v.T
        else:
            bracket = e_u @ d_v.T + d_u @ e_v.T + e_u @ e_v.T
        return first + lr**2 * bracket

    d_u, d_v = _d_eps(g_u, eps), _d_eps(g_v, eps)
    e_u = _d_eps(g_u @ q, eps) @ q.T - d_u
    e_v = _d_eps(g_v @ q, eps) @ q.T - d_v
    assert rel(diff, rhs(e_u, e_v, d_u, d_v)) < 1e-10
    assert rel(diff, rhs(e_u, e_v, d_u, d_v, second_form=True)) < 1e-10
    # control: the defect built on the wrong side of Q
    e_u_bad = _d_eps(g_u @ q, eps) @ q - d_u
    e_v_bad = _d_eps(g_v @ q, eps) @ q - d_v
    assert rel(diff, rhs(e_u_bad, e_v_bad, d_u, d_v)) > 1e-2


def test_prop44_scalar_witness(driver):
    """T11: n = 1, k = 2, f(w) = w²/2 — Adam's products differ in closed form, GD's do not."""
    eps = 1e-8
    c = 1 / math.sqrt(2)
    q = torch.tensor([[c, c], [-c, c]], dtype=F64)
    u0 = torch.tensor([[1.0, 0.0]], dtype=F64)
    v0 = u0.clone()
    # the engine's sensing loss with m = 1, A = [1/√2], y = 0 is exactly f(w) = w²/2
    inst = testbed.Instance(A=torch.tensor([[c]], dtype=F64), y=torch.zeros(1, dtype=F64),
                            X=torch.zeros(1, 1, dtype=F64))
    gu, gv = grads(inst, u0, v0)
    assert rel(gu, v0) < 1e-15 and rel(gv, u0) < 1e-15

    def w_pair(rule, lr, **hp):
        base = driver(inst, rule, u0, v0, lr, 1, **hp)
        rot = driver(inst, rule, u0 @ q, v0 @ q, lr, 1, **hp)
        return float(gauge.product(base.u, base.v)), float(gauge.product(rot.u, rot.v))

    for lr in (1e-3, 0.1, 0.5):
        w_base, w_rot = w_pair("adam", lr, eps=eps)
        assert abs(w_base - (1 - lr / (1 + eps)) ** 2) < 1e-12
        assert abs(w_rot - 2 * c * c * (1 - lr / (c + eps)) ** 2) < 1e-12
        assert abs(w_rot - (1 - lr / (c + eps)) ** 2) < 1e-12
        assert abs(w_base - w_rot) > 1e-6
        for rule in ("gd", "scalar_adam"):  # control: equivariant rules give one product
            wb, wr = w_pair(rule, lr)
            assert abs(wb - wr) < 1e-14


def test_prop42_shampoo_two_sided_rule(driver, problem, factors):
    """T17: the engine's Shampoo step is −η (ggᵀ + λI)^{-1/4} g (gᵀg + λI)^{-1/4} at step 1."""
    lam, lr = 1.0, 0.1
    p = problem(17)
    u0, v0 = factors(17)
    tr = driver(p.inst, "shampoo", u0, v0, lr, 1, damping=lam, refresh=1)
    for g, delta in zip(tr.grads[0], tr.deltas[0]):
        n, k = g.shape
        left = clamped_root(g @ g.T + lam * torch.eye(n, dtype=F64))
        right = clamped_root(g.T @ g + lam * torch.eye(k, dtype=F64))
        assert rel(delta, -lr * left @ g @ right) < 1e-10
        # controls: one-sided rules (both equivariant, so only this test separates them)
        assert rel(delta, -lr * left @ g) > 1e-2
        assert rel(delta, -lr * g @ right) > 1e-2
