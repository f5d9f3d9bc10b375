"""The convex reference (spec: sensing.md §9): feasibility, and the minimum nuclear norm on tiny
instances whose answer is known in closed form."""

import math

import pytest
import torch

from gaugelab.core import records
from gaugelab.sensing import nuclear


def test_the_solution_is_feasible_to_machine_precision():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(20, 36, generator=g, dtype=torch.float64)
    y = torch.randn(20, generator=g, dtype=torch.float64)
    sol = nuclear.min_nuclear_norm(a, y, (6, 6), max_iter=300)
    assert torch.linalg.vector_norm(a @ sol.X.reshape(-1) - y) / torch.linalg.vector_norm(y) < 1e-10


def test_one_measurement_of_the_entry_sum():
    """<11ᵀ, X> = c: ‖X‖_* ≥ c/‖11ᵀ‖_op = c/n by duality, attained only by (c/n²)11ᵀ."""
    n, c = 4, 3.0
    a = torch.ones(1, n * n, dtype=torch.float64)
    sol = nuclear.min_nuclear_norm(a, torch.tensor([c], dtype=torch.float64), (n, n))
    assert sol.converged
    assert abs(torch.linalg.svdvals(sol.X).sum().item() - c / n) < 1e-9
    assert torch.allclose(sol.X, torch.full((n, n), c / n**2, dtype=torch.float64), atol=1e-9)


def test_two_diagonal_entries():
    """X₁₁ = 3, X₂₂ = −1: ‖X‖_* ≥ <diag(1, −1), X> = 4, attained by diag(3, −1)."""
    a = torch.zeros(2, 4, dtype=torch.float64)
    a[0, 0] = a[1, 3] = 1.0
    sol = nuclear.min_nuclear_norm(a, torch.tensor([3.0, -1.0], dtype=torch.float64), (2, 2))
    assert abs(torch.linalg.svdvals(sol.X).sum().item() - 4.0) < 1e-9


def test_exact_effective_rank_drops_zero_weights():
    assert nuclear.effective_rank_exact(torch.tensor([1.0, 1.0, 0.0], dtype=torch.float64)) == pytest.approx(2.0)


def test_reference_record_round_trip(tmp_path):
    rec = nuclear.reference(6, 1, 2.0, seed=42, max_iter=500, threads=1)
    assert rec["feasibility"] < 1e-10 and math.isfinite(rec["rec"]) and rec["config"]["m"] == 22
    path = tmp_path / "seed42.json"
    records.write_json(path, rec)
    assert nuclear.read(path)["rec"] == rec["rec"]
    path.write_text(path.read_text()[:50])
    with pytest.raises(records.RecordError, match="seed42.json"):
        nuclear.read(path)


def test_float32_input_is_refused():
    with pytest.raises(ValueError, match="float64"):
        nuclear.min_nuclear_norm(torch.ones(1, 4), torch.ones(1), (2, 2))
