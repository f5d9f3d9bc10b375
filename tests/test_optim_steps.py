"""Each optimizer's update against a step computed by hand on a tiny gradient.

Two runs advance as a batch with different learning rates, so the per-run lr broadcasting is
checked too. Numbers are in float64; expected values are written out from the rule's definition.
"""

import math

import pytest
import torch

from gaugelab import optim
from gaugelab.sensing import select

LRS = torch.tensor([0.1, 0.2], dtype=torch.float64)
G1 = torch.tensor([[3.0, -4.0]], dtype=torch.float64)
G2 = torch.tensor([[1.0, 1.0]], dtype=torch.float64)


def batch(g):
    """The same gradient for both runs: shape (2, *g.shape)."""
    return g.expand(2, *g.shape).clone()


def steps(name, grads_per_step, **hp):
    rule = optim.make(name, **hp)
    params = [batch(g) for g in grads_per_step[0]]
    state = rule.init(params)
    out = []
    for t, grads in enumerate(grads_per_step, start=1):
        deltas, state = rule.update([batch(g) for g in grads], state, LRS, t)
        out.append(deltas)
    return out, state


def per_lr(expected_unit):
    """Expected deltas of both runs from the delta at lr = 1."""
    return torch.stack([0.1 * expected_unit, 0.2 * expected_unit])


def close(a, b, tol=1e-12):
    assert torch.allclose(a, b, rtol=tol, atol=tol), (a, b)


def test_gd():
    (d,), _ = steps("gd", [[G1]])
    close(d[0], per_lr(-G1))


def test_momentum_two_steps():
    out, _ = steps("momentum", [[G1], [G2]])
    close(out[0][0], per_lr(-G1))
    close(out[1][0], per_lr(-torch.tensor([[0.9 * 3 + 1, 0.9 * -4 + 1]], dtype=torch.float64)))


def test_adam_two_steps():
    out, _ = steps("adam", [[G1], [G2]])
    close(out[0][0], per_lr(-torch.tensor([[3 / (3 + 1e-8), -4 / (4 + 1e-8)]], dtype=torch.float64)))
    m = torch.tensor([[0.09 * 3 + 0.1, 0.09 * -4 + 0.1]], dtype=torch.float64) / (1 - 0.9**2)
    v = torch.tensor([[0.000999 * 9 + 0.001, 0.000999 * 16 + 0.001]], dtype=torch.float64) / (1 - 0.999**2)
    close(out[1][0], per_lr(-m / (v.sqrt() + 1e-8)))


def test_scalar_adam_pools_both_factors():
    zero = torch.zeros_like(G1)
    out, _ = steps("scalar_adam", [[G1, zero]])
    du, dv = out[0]
    scale = math.sqrt((9 + 16) / 4) + 1e-8  # mean of v-hat = g² over all four entries
    close(du, per_lr(-G1 / scale))
    close(dv, per_lr(zero))


@pytest.mark.parametrize("outer_eps", [True, False])
def test_adam_p_puts_eps_in_both_bases_and_outside_unless_the_gpu_port(outer_eps):
    """D = (s + eps)^p (s̄ + eps)^(1-p) on the first step (m̂ = g, s = |g|, s̄ = sqrt(mean g²) over
    both factors); the CPU dial divides by D + eps, the GPU port (§14.6) by D. A large eps shows it."""
    zero, eps = torch.zeros_like(G1), 0.5
    out, _ = steps("adam_p", [[G1, zero]], p=0.5, eps=eps, outer_eps=outer_eps)
    pooled = math.sqrt((9 + 16) / 4) + eps
    denom = torch.sqrt((G1.abs() + eps) * pooled) + (eps if outer_eps else 0.0)
    close(out[0][0], per_lr(-G1 / denom))
    close(out[0][1], per_lr(zero))


def test_rmsprop():
    (d,), _ = steps("rmsprop", [[G1]])
    expected = torch.tensor([[3 / (0.1 * 3 + 1e-8), -4 / (0.1 * 4 + 1e-8)]], dtype=torch.float64)
    close(d[0], per_lr(-expected))


def test_signum_sign_of_zero_is_zero():
    g = torch.tensor([[3.0, 0.0, -4.0]], dtype=torch.float64)
    (d,), _ = steps("signum", [[g]])
    close(d[0], per_lr(-torch.tensor([[1.0, 0.0, -1.0]], dtype=torch.float64)))


def test_lion_signs_before_state_update():
    out, state = steps("lion", [[G1], [G2]])
    close(out[0][0], per_lr(-torch.tensor([[1.0, -1.0]], dtype=torch.float64)))
    # step 2: sign(0.9 * 0.01 g1 + 0.1 g2) = sign([0.127, 0.064]) = [1, 1]
    close(out[1][0], per_lr(-torch.tensor([[1.0, 1.0]], dtype=torch.float64)))
    close(state["m"][0][0], 0.99 * 0.01 * G1 + 0.01 * G2)


def test_adafactor_factored_second_moment():
    g = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64)
    (d,), _ = steps("adafactor", [[g]])
    rows, cols = [2.5, 12.5], [5.0, 10.0]  # row and column means of g²
    vhat = torch.tensor([[0.001 * r * c / 7.5 for c in cols] for r in rows], dtype=torch.float64)
    close(d[0], per_lr(-g / (vhat.sqrt() + 1e-8)))


def test_muon_newton_schulz_on_singular_values():
    g = torch.tensor([[2.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
    (d,), _ = steps("muon", [[g]])
    a, b, c = 3.4445, -4.7750, 2.0315
    sigma = [2 / (math.sqrt(5) + 1e-7), 1 / (math.sqrt(5) + 1e-7)]
    for _ in range(5):
        sigma = [a * s + b * s**3 + c * s**5 for s in sigma]
    close(d[0], per_lr(-torch.diag(torch.tensor(sigma, dtype=torch.float64))), tol=1e-10)


def test_shampoo_first_step_and_refresh():
    g = torch.tensor([[2.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
    out, state = steps("shampoo", [[g], [g]], refresh=20)
    root = torch.tensor([(4 + 1) ** -0.25, (1 + 1) ** -0.25], dtype=torch.float64)
    close(out[0][0], per_lr(-torch.diag(root * torch.tensor([2.0, 1.0], dtype=torch.float64) * root)))
    # step 2 reuses the step-1 roots (refresh at t = 1, 21, ...), while the sums keep growing
    close(out[1][0], out[0][0])
    close(state["L"][0][0], 2 * g @ g.T)


def test_unknown_optimizer_names_the_choices():
    with pytest.raises(ValueError, match="unknown optimizer 'adamw'.*scalar_adam"):
        optim.make("adamw")


def test_classes_match_the_paper():
    assert optim.EQUIVARIANT == {"gd", "momentum", "scalar_adam", "muon", "shampoo"}
    assert {m for m in optim.REGISTRY if select.klass(m) == "eq"} == optim.EQUIVARIANT  # the cards' classes


def test_scaledgd_one_step_against_the_formula():
    """§3.6 written out with explicit inverses: U's step preconditioned by V's Gram, then V's by the
    updated U's, each damped by 1e-4 mean(diag(Gram)) + 1e-12; two runs at two lrs."""
    g = torch.Generator().manual_seed(0)
    u, v, g_u, g_v = (torch.randn(3, 2, generator=g, dtype=torch.float64) for _ in range(4))
    rule = optim.make("scaledgd")
    state = rule.init([batch(u), batch(v)])
    (d_u, d_v), state = rule.update([batch(g_u), batch(g_v)], state, LRS, 1)

    def damped_inverse(p):
        gram = p.T @ p
        lam = 1e-4 * torch.diagonal(gram).mean() + 1e-12
        return torch.linalg.inv(gram + lam * torch.eye(2, dtype=torch.float64))

    for run, lr in enumerate(LRS.tolist()):
        u_new = u - lr * g_u @ damped_inverse(v)
        v_new = v - lr * g_v @ damped_inverse(u_new)  # the already updated U
        assert torch.allclose(u + d_u[run], u_new, rtol=1e-12, atol=1e-14)
        assert torch.allclose(v + d_v[run], v_new, rtol=1e-12, atol=1e-14)
        assert torch.equal(state["P"][0][run], u + d_u[run]) and torch.equal(state["P"][1][run], v + d_v[run])


def test_scaledgd_is_a_control_outside_the_registry():
    assert "scaledgd" in optim.CONTROLS and "scaledgd" not in optim.REGISTRY
    with pytest.raises(ValueError, match="scaledgd"):
        optim.make("no_such_rule")
