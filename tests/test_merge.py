"""EXTENSION (attention.md §13.2): per-head Procrustes merge of twins, the three unit checks."""

import pytest
import torch

from gaugelab.attention import float64
from gaugelab.attention import harness, merge
from gaugelab.attention.pairs import Pair
from gaugelab.attention import configs

CFG = configs.config("f64-mod47-L2d64h4")


@pytest.fixture(scope="module")
def step0():
    torch.use_deterministic_algorithms(True)
    base = float64.initial_params(CFG, 42)
    task = float64.make_task(CFG)
    return base, task


def test_step0_gauge_twin_is_undone_and_the_merge_reproduces_the_base(step0):
    base, task = step0
    pair = Pair.of("adam", "gauge", 42, 777)
    b = harness.twin_of(base, CFG, pair)
    rotations, residuals = merge.procrustes(base, b, CFG)
    drawn = harness.gauge_rotations(CFG, 777, torch.float64)
    assert torch.allclose(rotations, drawn.mT, atol=1e-12)  # R_h = A_hᵀ
    assert max(residuals) < 1e-14
    report = merge.merge_report(base, b, CFG, task.x_val, task.y_val, task.x_train, task.y_train, alphas=())
    assert report["aligned_drift_to_a"] < 1e-13 and report["qk_max"] < 1e-13
    assert report["naive_drift_to_a"] > 1e-3  # ½(I + A_h) is not orthogonal: the function moves
    assert abs(report["aligned_barrier"]) < 1e-12


def test_identity_twin_aligns_to_the_identity(step0):
    base, task = step0
    b = harness.twin_of(base, CFG, Pair.of("adam", "identity", 42))
    rotations, residuals = merge.procrustes(base, b, CFG)
    eye = torch.eye(CFG.hd, dtype=torch.float64).expand_as(rotations)
    assert torch.allclose(rotations, eye, atol=1e-12) and max(residuals) < 1e-14
    report = merge.merge_report(base, b, CFG, task.x_val, task.y_val, alphas=())
    assert report["aligned_drift_to_a"] < 1e-13 and report["drift_ab"] == 0.0


def test_alignment_preserves_the_function(step0):
    base, task = step0
    gen = torch.Generator().manual_seed(5)
    b = {k: v + 0.05 * torch.randn(v.shape, generator=gen, dtype=v.dtype) for k, v in base.items()}
    aligned, _ = merge.align(base, b, CFG)
    za, zb = merge.evaluate(aligned, CFG, task.x_val, task.y_val)[0], merge.evaluate(b, CFG, task.x_val, task.y_val)[0]
    assert harness.drift(za, zb) < 1e-13
    assert max(abs(x - y) for x, y in zip(merge.qk(b, aligned, CFG), [0.0] * 8)) < 1e-13  # invariant unchanged
