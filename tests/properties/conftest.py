"""Fixtures of identities.md §2 (Problem, Factors, rand_orthogonal, the driver) and float64.

The suite runs in float64 on one intra-op thread: the default dtype and the thread count are
switched before anything is drawn and restored after every test, so no global state leaks into
other test files.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

try:  # the package may not be installed in the environment that runs the suite
    import gaugelab  # noqa: F401
except ImportError:  # pragma: no cover
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from gaugelab.core import runtime  # noqa: E402

from . import harness  # noqa: E402


@pytest.fixture(autouse=True)
def float64():
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        yield
    finally:
        torch.set_default_dtype(previous)


@pytest.fixture(autouse=True)
def single_thread():
    """Every tensor here is tiny: intra-op threads only add synchronisation, and on a loaded
    machine (other jobs on the other core) two spinning threads made the suite ~40x slower."""
    previous = torch.get_num_threads()
    runtime.set_threads(1)
    try:
        yield
    finally:
        runtime.set_threads(previous)


@pytest.fixture
def problem():
    """P(seed; n=6, k=3, r=2, m=20) -> harness.Problem."""
    return harness.make_problem


@pytest.fixture
def factors():
    """F(seed; scale=0.3) -> (U, V)."""
    return harness.make_factors


@pytest.fixture
def rand_orthogonal():
    """Q_k(seed): Haar orthogonal k×k."""
    return harness.rand_orthogonal


@pytest.fixture
def driver():
    """run(inst, rule, U0, V0, lr, steps, **hparams) -> harness.Trace (fresh state each call)."""
    return harness.run
