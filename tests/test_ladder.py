"""The GPU problem-size ladder (App. D.9, Table 11; spec sensing.md §14): the GPU protocol's own
pieces on the CPU in float64 (rounded m, casts, the GPU loop's statuses), its arms and grids, and
the opt-in target `snakemake ladder` on the smoke configuration."""

from __future__ import annotations

import math

import pytest
import torch

from gaugelab.sensing import gpu, runner, testbed

EXP = {"n": 8, "rank": 2, "width": 8, "measurements_per_dof": 2.0, "init": 1e-3, "budget": 400, "tol": 1e-7,
       "check_every": 200, "loop": gpu.LOOP, "decayed": []}


def test_m_rounds_half_to_even_where_the_cpu_truncates():
    assert gpu.measurements(64, 3, 1.25) == 469 and testbed.measurements(64, 3, 1.25) == 468  # 468.75
    assert gpu.measurements(64, 5, 1.5) == 922  # 922.5: Python's round, half to even
    arm = {**EXP, "n": 64, "rank": 3, "width": 64, "measurements_per_dof": 1.25}
    assert runner.problem_size(arm)["m"] == 469 and runner.problem_size({**arm, "loop": "canonical"})["m"] == 468


def test_float64_instance_is_the_float32_draw_cast_with_y_after_the_cast():
    inst, u0, v0 = runner.prepare(EXP, 42, "float64", torch.device("cpu"))
    m = runner.problem_size(EXP)["m"]
    ref = testbed.make_instance(8, 2, m, 42)
    ref_u, ref_v = testbed.init_factors(8, 8, 1e-3, 42)
    assert inst.A.dtype == u0.dtype == torch.float64
    assert torch.equal(inst.A, ref.A.double()) and torch.equal(inst.X, ref.X.double())
    assert torch.equal(u0, ref_u.double()) and torch.equal(v0, ref_v.double())
    assert torch.equal(inst.y, inst.A @ inst.X.reshape(-1))  # after the cast, not the float32 y cast
    assert not torch.equal(inst.y, ref.y.double())


def test_gpu_loop_keeps_a_diverged_runs_train_and_blanks_its_metrics():
    cells = [("gd", 42, 100.0, 0.0), ("gd", 42, 0.05, 0.0)]
    diverged, fine = runner.run_batch("ladder_test", EXP, cells, dtype="float64", threads=1)
    assert diverged["status"] == "diverged" and diverged["steps"] < EXP["budget"]
    assert diverged["train"] > testbed.DIVERGENCE_BOUND or not math.isfinite(diverged["train"])
    assert not math.isnan(diverged["train"])
    assert all(math.isnan(diverged[k]) for k in ("rec", "erank", "nuc", "bal"))
    assert math.isfinite(fine["rec"]) and fine["config"]["dtype"] == "float64" and fine["config"]["loop"] == "gpu"
    canonical = runner.run_batch("ladder_test", {**EXP, "loop": "canonical"}, cells[:1], dtype="float64", threads=1)[0]
    assert canonical["status"] == "diverged" and math.isnan(canonical["train"])  # §2.1: all NaN
    assert gpu.status(diverged["status"], diverged["train"]) == gpu.DIVERGED


@pytest.mark.parametrize("loop_status, train, expected", [
    ("interpolated", 5e-8, "interp"), ("budget", 5e-8, "interp"), ("budget", 1e-7, "loose"),
    ("budget", 9e-5, "loose"), ("budget", 1e-4, "n/i"), ("diverged", 1e9, "diverged"),
])
def test_gpu_status_bars(loop_status, train, expected):
    assert gpu.status(loop_status, train) == expected


def test_scaledgd_trains_in_the_batched_loop():
    """The control's state copy of (U, V) stays the loop's factors as runs leave the batch."""
    cells = [("scaledgd", 42, lr, 0.0) for lr in (10.0, 1e-2, 1e-3)]  # the first leaves at step 3
    runs = runner.run_batch("ladder_test", EXP, cells, dtype="float64", threads=1)
    assert runs[0]["status"] == "diverged" and all(math.isfinite(r["rec"]) for r in runs[1:])
    alone = runner.run_batch("ladder_test", EXP, cells[1:2], dtype="float64", threads=1)[0]
    # the native numerics may round a batch differently in the last bits; a misaligned copy would not be close
    assert alone["rec"] == pytest.approx(runs[1]["rec"], rel=1e-9)
    assert alone["train"] == pytest.approx(runs[1]["train"], rel=1e-6)
