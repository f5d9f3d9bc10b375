"""T12-T16, T18: equivariant maps, spectral transfer functions, Newton–Schulz and matrix roots
(Thm 4.5, Prop A.1, Prop 4.2(3)-(4))."""

from __future__ import annotations


import torch

from gaugelab import optim
from gaugelab.core import gauge

from .harness import (BROKEN, EXACT, F64, direction, gen, perturbed_identity, randn, rel,
                      spectral_on_support)


def _gram_x(phi, g):
    """X(G) = Φ(G) G⁺ (Moore–Penrose pseudoinverse)."""
    return phi(g) @ torch.linalg.pinv(g)


def test_thm45_gram_determined_left_preconditioner(rand_orthogonal):
    """T12: an O(k)-equivariant map is Φ(G) = H(GGᵀ)G with H = Φ(G)G⁺ constant on orbits."""
    g = randn(7, 4, generator=gen(77))
    q = rand_orthogonal(4, 33)
    gq = g @ q
    d7 = torch.diag(torch.arange(1, 8, dtype=F64))
    maps = {
        "msign": gauge.msign,
        "norm_scaled": lambda m: torch.linalg.matrix_norm(m) * m,
        "left_diag": lambda m: d7 @ m,
        "ns5": lambda m: optim.newton_schulz(m, 5),
        "shampoo": lambda m: direction("shampoo", m, damping=1.0, refresh=1),
    }
    for name, phi in maps.items():
        x1, x2 = _gram_x(phi, g), _gram_x(phi, gq)
        assert rel(x2, x1) < 1e-10, name
        assert rel(x1 @ g, phi(g)) < 1e-10, name
        assert rel(phi(gq), phi(g) @ q) < 1e-10, name  # the equivariance assumed

    # orbit facts: equal Gram matrices mean one orbit, joined by Q̂ = G⁺G₂
    eye4 = torch.eye(4, dtype=F64)
    assert rel(gq @ gq.T, g @ g.T) < 1e-12
    qhat = torch.linalg.pinv(g) @ gq
    assert rel(qhat.T @ qhat, eye4) < 1e-10
    assert rel(g @ qhat, gq) < 1e-10
    # converse: any Gram-determined left preconditioner is equivariant
    h = torch.linalg.inv(g @ g.T + torch.eye(7, dtype=F64))
    assert rel(h @ gq, (h @ g) @ q) < EXACT

    # controls: a right preconditioner and the engine's signum direction are not Gram-determined
    d4 = torch.diag(torch.arange(1, 5, dtype=F64))
    for name, phi in {"right_diag": lambda m: m @ d4, "signum": lambda m: direction("signum", m)}.items():
        assert rel(_gram_x(phi, gq), _gram_x(phi, g)) > 0.1, name
    b = perturbed_identity(4, seed=2)
    qhat_b = torch.linalg.pinv(g) @ (g @ b)
    assert rel(qhat_b.T @ qhat_b, eye4) > 0.1


def _psi(p):
    return lambda lam: lam.pow(p)


def test_propA1_spectral_transfer_function():
    """T13: ψ(GGᵀ)G = Σ h(σᵢ) uᵢ vᵢᵀ with h(s) = ψ(s²)s, via the engine root and on the support."""
    g = randn(6, 4, generator=gen(101))
    a, sig, bh = torch.linalg.svd(g, full_matrices=False)
    gram = g @ g.T
    cases = [(-0.25, lambda s: s.sqrt()), (0.0, lambda s: s), (-0.5, lambda s: torch.ones_like(s))]
    for p, h in cases:
        target = (a * h(sig).unsqueeze(0)) @ bh
        engine = optim.matrix_power(gram, p)  # undamped: the clamp hits only the null space
        support = spectral_on_support(gram, _psi(p))
        assert rel(engine @ g, target) < 1e-9, p
        assert rel(support @ g, target) < 1e-9, p
    assert int((torch.linalg.eigvalsh(gram) > 1e-10).sum()) == 4
    # control: ψ = λ^{-1/4} paired with h(s) = s^{-1/2} (the trailing factor s dropped)
    wrong = (a * sig.pow(-0.5).unsqueeze(0)) @ bh
    assert rel(optim.matrix_power(gram, -0.25) @ g, wrong) > 0.1
    assert rel(spectral_on_support(gram, _psi(-0.25)) @ g, wrong) > 0.1


def test_propA1_undamped_shampoo_equals_msign():
    """T14: (GGᵀ)^{-1/4} G (GᵀG)^{-1/4} = msign(G) for tall, square and wide G; neither the
    one-sided rule nor the damped (engine) Shampoo direction is the polar factor."""
    seed = 202
    g_seq = gen(seed)
    shapes = [(6, 4), (5, 5), (4, 6)]
    mats = [randn(n, k, generator=g_seq) for n, k in shapes]
    # pitfall 4: the square case needs σ_min² > 1e-6 (else the clamp would touch the range)
    while float(torch.linalg.svdvals(mats[1]).min()) ** 2 <= 1e-6:  # pragma: no cover
        seed += 1
        print(f"T14: seed {seed - 1} violates the square precondition; moving to {seed}")
        g_seq = gen(seed)
        mats = [randn(n, k, generator=g_seq) for n, k in shapes]
    for g in mats:
        ms = gauge.msign(g)
        ir_l = optim.matrix_power(g @ g.T, -0.25)
        ir_r = optim.matrix_power(g.T @ g, -0.25)
        assert rel(ir_l @ g @ ir_r, ms) < 1e-9, tuple(g.shape)
        sl = spectral_on_support(g @ g.T, _psi(-0.25))
        sr = spectral_on_support(g.T @ g, _psi(-0.25))
        assert rel(sl @ g @ sr, ms) < 1e-9, tuple(g.shape)
        # controls
        assert rel(ir_l @ g, ms) > 1e-2, tuple(g.shape)
        damped = direction("shampoo", g, damping=1.0, refresh=1)
        assert rel(damped, ms) > 1e-2, tuple(g.shape)


def test_propA1_flat_transfer_not_lipschitz():
    """T15: ‖msign(G₊) − msign(G₋)‖/‖G₊ − G₋‖ = 1/δ for G± = diag(1, ±δ); GD's quotient is 1."""
    q_msign, q_gd = {}, {}
    for delta in (1e-1, 1e-2, 1e-3, 1e-4):
        gp = torch.diag(torch.tensor([1.0, delta], dtype=F64))
        gm = torch.diag(torch.tensor([1.0, -delta], dtype=F64))
        assert abs(float(torch.linalg.vector_norm(gp - gm)) - 2 * delta) < 1e-15
        q_msign[delta] = float(torch.linalg.vector_norm(gauge.msign(gp) - gauge.msign(gm))) / (2 * delta)
        gd_p, gd_m = direction("gd", gp), direction("gd", gm)
        q_gd[delta] = float(torch.linalg.vector_norm(gd_p - gd_m)) / (2 * delta)
        assert abs(q_msign[delta] - 1 / delta) < 1e-6 / delta
        assert abs(q_gd[delta] - 1) < 1e-12  # control: the non-flat transfer stays bounded
    assert q_msign[1e-4] > 500 * q_msign[1e-1]


def _ns_poly(x):
    a, b, c = 3.4445, -4.7750, 2.0315  # spec §3.5, written independently of the engine
    return a * x + b * x**3 + c * x**5


def test_prop42_newton_schulz_equivariant_every_truncation(rand_orthogonal):
    """T16: NS(MQ, s) = NS(M, s)Q and NS(PM) = P·NS(M) at every truncation; coefficients and
    transposition pinned; a GL element does not commute."""
    g = gen(303)
    for n, k in [(8, 4), (5, 5), (3, 6)]:
        m = randn(n, k, generator=g)
        q = rand_orthogonal(k, 13 * n)
        for s in range(1, 6):
            assert rel(optim.newton_schulz(m @ q, s), optim.newton_schulz(m, s) @ q) < 1e-10, (n, k, s)
        pl = rand_orthogonal(n, 99)
        assert rel(optim.newton_schulz(pl @ m, 5), pl @ optim.newton_schulz(m, 5)) < 1e-10
        # coefficient pin: one iteration maps each singular value by p(σ/(‖M‖ + 1e-7))
        sv = torch.linalg.svdvals(optim.newton_schulz(m, 1)).sort().values
        x = torch.linalg.svdvals(m) / (torch.linalg.matrix_norm(m) + 1e-7)
        assert float((sv - _ns_poly(x).sort().values).abs().max()) < 1e-12
        assert optim.newton_schulz(m, 5).dtype == F64
        if n > k:  # transposition pin
            assert rel(optim.newton_schulz(m), optim.newton_schulz(m.T).T) < EXACT
        # controls
        assert rel(optim.newton_schulz(m @ q), optim.newton_schulz(m)) > BROKEN
        b = perturbed_identity(k, seed=2)
        assert rel(optim.newton_schulz(m @ b), optim.newton_schulz(m) @ b) > 1e-2


def test_prop42_spectral_function_conjugation(rand_orthogonal):
    """T18: matrix_power(QᵀRQ + λI) = Qᵀ matrix_power(R + λI) Q; symmetrisation and the clamp
    value are pinned."""
    g = gen(404)
    x = randn(9, 5, generator=g)
    r = x.T @ x
    q = rand_orthogonal(5, 55)
    b = perturbed_identity(5, seed=2)
    eye = torch.eye(5, dtype=F64)
    for lam in (0.0, 1.0, 7.5):
        lhs = optim.matrix_power(q.T @ r @ q + lam * eye, -0.25)
        assert rel(lhs, q.T @ optim.matrix_power(r + lam * eye, -0.25) @ q) < 1e-9, lam
        # control: conjugation by a non-orthogonal B does not commute with the root
        lhs_b = optim.matrix_power(b.T @ r @ b + lam * eye, -0.25)
        assert rel(lhs_b, b.T @ optim.matrix_power(r + lam * eye, -0.25) @ b) > 0.1, lam
    # symmetrisation pin: only ½(M + Mᵀ) is rooted, so an antisymmetric part is ignored ...
    k = randn(5, 5, generator=g)
    skew, sym = 0.3 * (k - k.T), 0.3 * (k + k.T)
    root = optim.matrix_power(r + eye, -0.25)
    assert rel(optim.matrix_power(r + eye + skew, -0.25), root) < 1e-12
    # ... while a symmetric part of the same size is not (control: the check is not vacuous)
    assert rel(optim.matrix_power(r + eye + sym, -0.25), root) > BROKEN
    # clamp pin: rank-3 PSD input, λ = 0: the null-space eigenvalues become (1e-6)^{-1/4}
    y = randn(3, 5, generator=g)
    deficient = y.T @ y
    out = torch.linalg.eigvalsh(optim.matrix_power(deficient, -0.25))
    clamp = (1e-6) ** -0.25
    assert abs(clamp - 31.6227766) < 1e-7
    top = out.sort(descending=True).values[:2]
    assert float((top - clamp).abs().max()) / clamp < 1e-9
    rest = out.sort(descending=True).values[2:]
    assert float(rest.max()) < clamp / 2  # the range eigenvalues are not clamped
