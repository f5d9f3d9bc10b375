"""The Adam-p dial's invariants (identities.md §7.2, sensing.md §4): its ends are Adam and
scalar-Adam, RMS p = 0 commutes with the gauge, p > 0 and the geometric-mean scalar do not."""

import pytest

from gaugelab import optim

from .harness import BROKEN, EXACT, LOOSE, rel


def _pair(driver, p, u0, v0, q, rule, lr, steps):
    return driver(p.inst, rule, u0, v0, lr, steps), driver(p.inst, rule, u0 @ q, v0 @ q, lr, steps)


def test_d1_adam_p_at_1_is_adam(driver, problem, factors):
    p, (u0, v0) = problem(0), factors(0)
    dial = driver(p.inst, optim.adam_p(1.0), u0, v0, 3e-2, 4)
    adam = driver(p.inst, "adam", u0, v0, 3e-2, 4)
    assert rel(dial.u, adam.u) < EXACT and rel(dial.v, adam.v) < EXACT
    control = driver(p.inst, optim.adam_p(0.5), u0, v0, 3e-2, 4)
    assert rel(control.u, adam.u) > BROKEN


def test_d1_rms_adam_p_at_0_is_scalar_adam_up_to_eps(driver, problem, factors):
    """Exactly scalar-Adam with eps = 0 (x^0 = 1); with eps = 1e-8 the trajectories differ only by
    the O(eps) term of the denominator (s̄ + 2 eps against s̄ + eps), the paper's "identical"."""
    p, (u0, v0) = problem(0), factors(0)
    zero = driver(p.inst, optim.adam_p(0.0, "rms", eps=0.0), u0, v0, 3e-2, 4)
    scalar_zero = driver(p.inst, optim.scalar_adam(eps=0.0), u0, v0, 3e-2, 4)
    assert rel(zero.u, scalar_zero.u) < EXACT and rel(zero.v, scalar_zero.v) < EXACT
    dial = driver(p.inst, optim.adam_p(0.0, "rms"), u0, v0, 3e-2, 4)
    scalar = driver(p.inst, "scalar_adam", u0, v0, 3e-2, 4)
    assert EXACT < rel(dial.u, scalar.u) < 1e-7  # O(eps / s̄), not zero and not structural


def test_d2_rms_p0_commutes_p_half_breaks(driver, problem, factors, rand_orthogonal):
    p, (u0, v0) = problem(0), factors(0)
    q = rand_orthogonal(p.k, 13)
    base, rot = _pair(driver, p, u0, v0, q, optim.adam_p(0.0, "rms"), 3e-2, 6)
    assert rel(rot.u, base.u @ q) < LOOSE and rel(rot.v, base.v @ q) < LOOSE
    assert rel(rot.u, base.u) > BROKEN  # non-vacuity
    base, rot = _pair(driver, p, u0, v0, q, optim.adam_p(0.5, "rms"), 3e-2, 1)
    assert rel(rot.u, base.u @ q) > BROKEN


def test_d3_geometric_mean_scalar_is_not_gauge_invariant(driver, problem, factors, rand_orthogonal):
    p, (u0, v0) = problem(0), factors(0)
    q = rand_orthogonal(p.k, 13)
    base, rot = _pair(driver, p, u0, v0, q, optim.adam_p(0.0, "geo"), 3e-2, 1)
    assert rel(rot.u, base.u @ q) > 1e-6


def test_unknown_convention_is_rejected():
    with pytest.raises(ValueError, match="convention 'mean'"):
        optim.adam_p(0.5, "mean")
