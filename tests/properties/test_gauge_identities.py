"""T1-T3: the gauge itself (Lemma 3.2 / Def 3.1, Lemma 4.1, Corollary A.3)."""

from __future__ import annotations

import torch

from gaugelab.core import gauge
from gaugelab.sensing import testbed

from .harness import BROKEN, EXACT, F64, gen, grads, perturbed_identity, randn, rel


def test_lemma32_gl_preserves_product_only_ok_isometric(problem, factors, rand_orthogonal):
    """T1: every GL(k) element keeps UVᵀ; only the orthogonal ones keep ‖U‖² + ‖V‖²."""
    p = problem(0)
    u, v = factors(0, n=p.n, k=p.k)
    w0, norm0 = gauge.product(u, v), float(gauge.param_norm_sq(u, v))
    g = gen(11)
    ms = [randn(p.k, p.k, generator=g) for _ in range(20)]
    ms = [m for m in ms if int(torch.linalg.matrix_rank(m)) == p.k]
    assert len(ms) >= 10  # spec: singular draws are skipped (none are, for this generator)
    eye = torch.eye(p.k, dtype=F64)

    changes = []
    for m in ms:
        um, vm = gauge.gl_action(u, v, m)
        assert rel(gauge.product(um, vm), w0) < EXACT
        change = abs(float(gauge.param_norm_sq(um, vm)) - norm0) / norm0
        is_orth = rel(m @ m.T, eye) < EXACT
        is_isom = change < EXACT
        # control: a generic GL element is neither orthogonal nor isometric, and the two agree
        assert not is_orth and not is_isom and is_orth == is_isom
        changes.append(change)
    assert max(changes) > BROKEN

    q = rand_orthogonal(p.k, 3)
    uq, vq = gauge.gl_action(u, v, q)
    assert rel(gauge.product(uq, vq), w0) < EXACT
    assert abs(float(gauge.param_norm_sq(uq, vq)) - norm0) < 1e-10
    # the positive element passes the same two predicates
    assert rel(q @ q.T, eye) < EXACT
    assert abs(float(gauge.param_norm_sq(uq, vq)) - norm0) / norm0 < EXACT
    # the O(k) form of the action agrees with the GL form at Q
    uo, vo = gauge.gauge_action(u, v, q)
    assert rel(uo, uq) < EXACT and rel(vo, vq) < EXACT


def test_lemma41_gradient_covariance(problem, factors, rand_orthogonal):
    """T2: ∇L(UQ, VQ) = ∇L(U, V)·Q by autograd through the engine loss; not so for GL."""
    p = problem(0)
    u, v = factors(0, n=p.n, k=p.k)
    q = rand_orthogonal(p.k, 5)
    gu, gv = grads(p.inst, u, v)
    gu_r, gv_r = grads(p.inst, *gauge.gauge_action(u, v, q))
    assert rel(gu_r, gu @ q) < EXACT
    assert rel(gv_r, gv @ q) < EXACT
    assert rel(gu_r, gu) > BROKEN  # non-vacuity: the rotation is applied

    b = perturbed_identity(p.k, seed=2)
    gu_b, gv_b = grads(p.inst, u @ b, v @ b)
    assert rel(gu_b, gu @ b) > BROKEN
    assert rel(gv_b, gv @ b) > BROKEN


def _depth3_loss(inst: testbed.Instance, u1, u2, u3):
    """The engine's sensing loss on the depth-3 product U₁U₂U₃ = (U₁U₂)(U₃ᵀ)ᵀ."""
    return testbed.loss(inst, (u1 @ u2)[None], u3.T[None]).sum()


def _depth3_grads(inst, u1, u2, u3):
    xs = [x.detach().clone().requires_grad_(True) for x in (u1, u2, u3)]
    loss = _depth3_loss(inst, *xs)
    return float(loss.detach()), torch.autograd.grad(loss, xs)


def test_corA3_depth3_interface_gauge(rand_orthogonal):
    """T3: the interface gauge (U₁Q, QᵀU₂, U₃) is covariant; a GL interface keeps the loss but
    not the covariance, so loss invariance alone does not single out O(k)."""
    g = gen(31)
    a = randn(12, 25, generator=g)
    y = randn(12, generator=g)
    u1 = 0.4 * randn(5, 4, generator=g)
    u2 = 0.4 * randn(4, 4, generator=g)
    u3 = 0.4 * randn(4, 5, generator=g)
    inst = testbed.Instance(A=a, y=y, X=torch.zeros(5, 5, dtype=F64))
    q = rand_orthogonal(4, 9)

    l0, (g1, g2, g3) = _depth3_grads(inst, u1, u2, u3)
    lq, (g1q, g2q, g3q) = _depth3_grads(inst, u1 @ q, q.T @ u2, u3)
    assert abs(lq - l0) < 1e-12
    assert rel(g1q, g1 @ q) < EXACT
    assert rel(g2q, q.T @ g2) < EXACT
    assert rel(g3q, g3) < EXACT
    assert rel(g1q, g1) > BROKEN  # non-vacuity

    b = perturbed_identity(4, seed=2)
    lb, (g1b, _, _) = _depth3_grads(inst, u1 @ b, torch.linalg.inv(b) @ u2, u3)
    assert abs(lb - l0) < 1e-12  # the GL interface also leaves the loss invariant ...
    assert rel(g1b, g1 @ b) > BROKEN  # ... but the gradient is not covariant
    assert rel(g1b, g1 @ torch.linalg.inv(b).T) < 1e-10  # it is contravariant
