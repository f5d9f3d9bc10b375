"""A1-A5: the per-head gauge of the attention model (identities.md §7.1; Section 6).

Everything goes through the engine: the transformer (built in float64 by the suite's fixture),
its forward pass and loss with autograd, the twin constructions and metrics of gaugelab.attention.twins,
and the update rules of gaugelab.optim driven by the engine's twin loop (twins.train). A test
writes only the closed-form side (the Prop 4.4 defect) and the deliberately wrong controls.
"""

from __future__ import annotations

import pytest
import torch

from gaugelab import optim
from gaugelab.optim import cards
from gaugelab.attention import harness, transformer, twins
from gaugelab.attention.configs import CPU_MOD47 as CFG

from .harness import BROKEN, F64, gen, randn, rel
from gaugelab.attention.pairs import Pair

SPLIT_SIZE = 96  # a fixed slice of the mod-47 data keeps the float64 suite fast


@pytest.fixture(scope="module")
def data():
    from gaugelab.attention import tasks

    split = tasks.modular_addition(CFG.vocab_out)
    return split.x_train[:SPLIT_SIZE], split.y_train[:SPLIT_SIZE], split.x_val[:128]


def base_params():
    """The CPU model's initial weights (init seed 42), built under the suite's float64 default."""
    params = transformer.initial_params(CFG, 42)
    assert params["E"].dtype == F64
    return params


def rotations(kind: str):
    """Per-head elements of O(hd): the engine's QR draw (no sign fix), the same with one head's
    determinant flipped (so both signs occur), and signed permutations."""
    a = harness.gauge_rotations(CFG, 777, F64)
    if kind == "reflection":
        a = a.clone()
        a[0, 0, 0, :] *= -1  # one head's det flips sign
    elif kind == "signed_permutation":
        g = gen(5)
        eye = torch.eye(CFG.hd, dtype=F64)
        a = torch.stack([torch.stack([eye[torch.randperm(CFG.hd, generator=g)]
                                      * torch.where(torch.rand(CFG.hd, generator=g) < 0.5, -1.0, 1.0).to(F64)
                                      for _ in range(CFG.n_head)]) for _ in range(CFG.n_layer)])
    return a


def twin_of(params, rot):
    """Copy 1 = params, copy 2 = the gauge twin with the given rotations (the engine's path)."""
    both = transformer.stack([params, params])
    harness.rotate_heads(both, CFG, rot)
    return both


def logits(both, x):
    with torch.no_grad():
        return transformer.forward(both, x, CFG)


def grads(both, x, y):
    leaves = [p.detach().clone().requires_grad_(True) for p in both.values()]
    stacked = dict(zip(both, leaves))
    loss = transformer.loss(transformer.forward(stacked, x, CFG), y).sum()
    return dict(zip(both, torch.autograd.grad(loss, leaves)))


def head_blocks(w, h):
    return w[harness.head_rows(CFG, h)]


def left_blockdiag(w, a_layer):
    """blockdiag(A_1 … A_H) · W: the gauge on the full d×d projection (rows)."""
    return torch.cat([a_layer[h] @ head_blocks(w, h) for h in range(CFG.n_head)])


# --- A1: function invariance --------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["qr", "reflection", "signed_permutation"])
def test_A1_gauge_twin_computes_the_same_function(kind, data):
    x, _, x_val = data
    rot = rotations(kind)
    dets = torch.linalg.det(rot).flatten()
    assert torch.allclose(dets.abs(), torch.ones_like(dets))
    if kind == "reflection":
        assert (dets < 0).any() and (dets > 0).any()
    both = twin_of(base_params(), rot)
    z = logits(both, x_val)
    assert harness.drift(z[0], z[1]) < 1e-12
    m1, m2 = harness.qk_invariants(both, CFG, 0), harness.qk_invariants(both, CFG, 1)
    for a, b in zip(m1.flatten(0, 1), m2.flatten(0, 1)):
        assert rel(b, a) < 1e-12
    assert rel(both["l0.W_Q"][1], both["l0.W_Q"][0]) > BROKEN  # non-vacuity: the basis moved


def test_A1_controls_break_the_function(data):
    _, _, x_val = data
    base, rot = base_params(), rotations("qr")

    def drift_after(edit):
        both = transformer.stack([base, base])
        with torch.no_grad():
            for i in range(CFG.n_layer):
                edit(both, i)
        z = logits(both, x_val)
        return harness.drift(z[0], z[1])

    def q_only(both, i):
        both[f"l{i}.W_Q"][1] = left_blockdiag(both[f"l{i}.W_Q"][1], rot[i])

    nonorth = torch.stack([torch.stack([torch.eye(CFG.hd, dtype=F64)
                                        + 0.4 * randn(CFG.hd, CFG.hd, generator=gen(i * 10 + h)) / CFG.hd ** 0.5
                                        for h in range(CFG.n_head)]) for i in range(CFG.n_layer)])

    def non_orthogonal(both, i):
        for name in ("W_Q", "W_K"):
            both[f"l{i}.{name}"][1] = left_blockdiag(both[f"l{i}.{name}"][1], nonorth[i])

    def input_side(both, i):  # the layout mistake: W ↦ W·blockdiag(A)
        blockdiag = torch.block_diag(*rot[i])
        for name in ("W_Q", "W_K"):
            both[f"l{i}.{name}"][1] = both[f"l{i}.{name}"][1] @ blockdiag

    for edit in (q_only, non_orthogonal, input_side):
        assert drift_after(edit) > BROKEN, edit.__name__

    both = twin_of(base, rot)  # the hd×hd product is not the invariant
    for i in range(CFG.n_layer):
        wq, wk = both[f"l{i}.W_Q"], both[f"l{i}.W_K"]
        small = [head_blocks(wq[c], 0) @ head_blocks(wk[c], 0).T for c in (0, 1)]
        assert rel(small[1], small[0]) > BROKEN


# --- A2: the identity twin is bit-identical ---------------------------------------------------


@pytest.mark.parametrize("optimizer", cards.twin_optimizers())
def test_A2_identity_twin_is_bit_identical(optimizer, data):
    x, y, x_val = data
    both = transformer.stack([base_params()] * 2)
    harness.make_twin(both, CFG, Pair.of(optimizer, "identity", 42))
    settings = {"momentum": 0.9, "lr_aux": 1e-3}
    lr = {"adam": 1e-3, "sgd": 0.1, "scalar_adam": 3e-3, "muon": 0.02}[optimizer]
    steps = list(twins.train(both, CFG, twins.make_rule(optimizer, list(both), settings), lr, x, y, 3))
    assert steps == [1, 2, 3]
    for name, p in both.items():
        assert torch.equal(p[0], p[1]), name
    z = logits(both, x_val)
    assert harness.drift(z[0], z[1]) == 0.0
    assert max(harness.qk_drift(both, CFG)) == 0.0


# --- A3: gradient covariance --------------------------------------------------------------------


def test_A3_gradients_transform_covariantly(data):
    x, y, _ = data
    rot = rotations("qr")
    g = grads(twin_of(base_params(), rot), x, y)
    for name, gr in g.items():
        layer, kind = (int(name[1]), name.split(".")[1]) if name.startswith("l") else (None, name)
        if kind in ("W_Q", "W_K"):
            for h in range(CFG.n_head):
                assert rel(head_blocks(gr[1], h), rot[layer, h] @ head_blocks(gr[0], h)) < 1e-10
            assert rel(gr[1], gr[0]) > BROKEN
        else:
            assert rel(gr[1], gr[0]) < 1e-10, name


def test_A3_control_gl_compensated_action_keeps_logits_not_covariance(data):
    x, y, x_val = data
    base = base_params()
    b = torch.eye(CFG.hd, dtype=F64) + 0.4 * randn(CFG.hd, CFG.hd, generator=gen(2)) / CFG.hd ** 0.5
    assert torch.linalg.cond(b) < 10
    b_inv_t = torch.linalg.inv(b).T
    both = transformer.stack([base, base])
    with torch.no_grad():
        for i in range(CFG.n_layer):
            for h in range(CFG.n_head):
                rows = harness.head_rows(CFG, h)
                both[f"l{i}.W_Q"][1, rows] = b @ both[f"l{i}.W_Q"][1, rows]
                both[f"l{i}.W_K"][1, rows] = b_inv_t @ both[f"l{i}.W_K"][1, rows]
    z = logits(both, x_val)
    assert harness.drift(z[0], z[1]) < 1e-12  # the GL action also keeps the function ...
    g = grads(both, x, y)["l0.W_Q"]
    assert rel(head_blocks(g[1], 0), b @ head_blocks(g[0], 0)) > BROKEN  # ... not the covariance
    assert rel(head_blocks(g[1], 0), b_inv_t @ head_blocks(g[0], 0)) < 1e-10  # it is contravariant


# --- A4: equivariant rules commute with the head gauge -------------------------------------------


EQUIVARIANT = {"gd": (lambda names: optim.gd(), 0.1),
               "sgd": (lambda names: twins.make_rule("sgd", names, {"momentum": 0.9}), 0.1),
               "scalar_adam": (lambda names: twins.make_rule("scalar_adam", names, {}), 3e-3),
               "muon": (lambda names: twins.make_rule("muon", names, {"momentum": 0.9, "lr_aux": 1e-3}), 0.02)}


def _commute_error(rule_of, lr, steps, data, rot):
    x, y, x_val = data
    both = twin_of(base_params(), rot)
    list(twins.train(both, CFG, rule_of(list(both)), lr, x, y, steps))
    both = {name: p.detach() for name, p in both.items()}
    errors = {}
    with torch.no_grad():
        for name, p in both.items():
            kind = name.split(".")[-1]
            if kind in ("W_Q", "W_K"):
                errors[name] = rel(p[1], left_blockdiag(p[0], rot[int(name[1])]))
            else:
                errors[name] = rel(p[1], p[0])
    z = logits(both, x_val)
    return errors, harness.drift(z[0], z[1]), both


@pytest.mark.parametrize("steps, tol", [(1, 1e-10), (5, 1e-8)])
@pytest.mark.parametrize("rule", sorted(EQUIVARIANT))
def test_A4_equivariant_rules_commute_with_the_head_gauge(rule, steps, tol, data):
    rot = rotations("qr")
    rule_of, lr = EQUIVARIANT[rule]
    errors, drift, both = _commute_error(rule_of, lr, steps, data, rot)
    assert max(errors.values()) < tol, max(errors, key=errors.get)
    assert drift < tol
    assert rel(both["l0.W_Q"][0], base_params()["l0.W_Q"]) > 1e-6  # the run moved


def test_A4_control_adam_does_not_commute(data):
    errors, drift, _ = _commute_error(lambda names: optim.adam(), 1e-3, 1, data, rotations("qr"))
    assert max(errors[f"l{i}.{n}"] for i in range(CFG.n_layer) for n in ("W_Q", "W_K")) > BROKEN
    assert drift > 1e-5


# --- A5: Adam's exact first-step defect (Prop 4.4) -----------------------------------------------


def _d(g, eps=1e-8):
    """D_ε(G) = G ⊘ (|G| + ε): Adam's zero-state first direction (identities.md §3.3)."""
    return g / (g.abs() + eps)


def _defect(wq, wk, gq, gk, a, eta, side):
    """Prop 4.4 for one head with U ↔ W_Qᵀ, V ↔ W_Kᵀ, Q ↔ Aᵀ; ``side`` = Aᵀ (right) or A (control)."""
    dq, dk = _d(gq), _d(gk)
    eq, ek = side @ _d(a @ gq) - dq, side @ _d(a @ gk) - dk
    return -eta * (eq.T @ wk + wq.T @ ek) + eta**2 * (eq.T @ dk + dq.T @ ek + eq.T @ ek)


def test_A5_adam_first_step_defect_matches_prop44(data):
    x, y, x_val = data
    eta, rot = 1e-3, rotations("qr")
    base = base_params()
    g = grads(transformer.stack([base, base]), x, y)  # the base gradients (both rows equal)
    both = twin_of(base, rot)
    list(twins.train(both, CFG, optim.adam(), eta, x, y, 1))
    m1, m2 = harness.qk_invariants(both, CFG, 0), harness.qk_invariants(both, CFG, 1)
    for i in range(CFG.n_layer):
        for h in range(CFG.n_head):
            args = [head_blocks(t, h) for t in (base[f"l{i}.W_Q"], base[f"l{i}.W_K"],
                                                g[f"l{i}.W_Q"][0], g[f"l{i}.W_K"][0])]
            a = rot[i, h]
            actual = m2[i, h] - m1[i, h]
            assert rel(actual, _defect(*args, a, eta, a.T)) < 1e-10
            assert float(actual.norm() / m1[i, h].norm()) > 1e-6
            assert rel(actual, _defect(*args, a, eta, a)) > 1e-2  # control: A instead of Aᵀ
    z = logits(both, x_val)
    assert harness.drift(z[0], z[1]) > 1e-5
