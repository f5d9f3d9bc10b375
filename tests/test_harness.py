"""The twin harness (attention.md §7.2, §8): the identity twin is checked bit for bit."""

import pytest
import torch

from gaugelab.attention import harness
from gaugelab.attention.pairs import Pair

IDENTITY = Pair.of("adam", "identity", 42)
ZERO = [0, 0.0, 0.0, 0.0]  # a checkpoint with drift and QK drift exactly 0


def test_bit_identical_compares_bits_not_values():
    x = torch.tensor([1.0, 0.0, float("nan")])
    signed = torch.tensor([1.0, -0.0, float("nan")])
    assert harness.bit_identical([x], [x.clone()])  # NaN == NaN bit for bit (torch.equal says no)
    assert not torch.equal(x, x.clone())
    assert torch.equal(x[:2], signed[:2]) and not harness.bit_identical([x], [signed])  # -0.0 != 0.0
    assert not harness.bit_identical([x], [x.double()]) and not harness.bit_identical([x], [x[:2]])
    assert not harness.bit_identical([x], [x, x])
    assert harness.bit_identical([torch.arange(3)], [torch.arange(3)])  # integers: their values
    grad = torch.zeros(2, requires_grad=True)
    assert harness.bit_identical([grad], [torch.zeros(2)])


def test_an_identity_twin_passes_only_when_bit_identical():
    base = [torch.ones(2, 3), torch.zeros(3)]
    harness.check_identity(IDENTITY, ZERO, base, [t.clone() for t in base])
    with pytest.raises(harness.DeterminismError, match=r"adam identity twin \(init 42, twin seed 0\).*step 0"):
        harness.check_identity(IDENTITY, ZERO, base, [base[0], -base[1]])  # -0.0: equal values, other bits
    with pytest.raises(harness.DeterminismError, match="drift 1.000e-07"):
        harness.check_identity(IDENTITY, [3, 1e-7, 0.0, 0.0], base, base)
    gauge = Pair.of("adam", "gauge", 42, 777)
    harness.check_identity(gauge, [0, 0.5, 0.5, 0.5], base, [base[0], -base[1]])  # only identity twins


def test_checkpoints_keep_step_0_the_marks_within_budget_and_the_last_step():
    assert harness.checkpoints(3, [1, 10, 50]) == [0, 1, 3]
    assert harness.checkpoints(50, (0, 1, 10, 50, 100)) == [0, 1, 10, 50]
