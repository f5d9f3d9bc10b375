"""The speed benchmarks run end to end (no time is asserted): the sensing engine's records in
worker processes, one shard each, equal its records as one batch; Table 9's batched float64
records equal its one-by-one records on the CPU."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.portable
def test_sensing_benchmark_runs_and_shards_in_workers_give_the_same_records():
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_sensing.py"), "--budget", "30",
         "--methods", "gd", "muon", "adafactor", "--threads", "2", "--workers", "2"],
        capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert "records in workers equal to the one-process engine's: yes" in out
    assert "speed-up, engine in workers:" in out


@pytest.mark.portable
def test_table9_benchmark_runs_and_on_the_cpu_batched_records_equal_one_by_one():
    """bench_table9 end to end on the CPU (two batch sizes and the job's program, one timed step, a
    three-step check): a row each, and the CPU's batched records equal to the one-by-one records."""
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_table9.py"), "--model", "f64-mod47-L2d64h4",
         "--steps", "1", "--warmup", "1", "--batch", "1", "2", "--program", "--check-steps", "3", "--device", "cpu"],
        capture_output=True, text=True, check=True, cwd=ROOT).stdout
    rows = [line.split() for line in out.splitlines() if line.startswith("2L/d64 ")]
    assert [row[1] for row in rows] == ["1", "2", "all"] and all(float(row[2]) > 0 for row in rows), out
    assert "batched records equal one-by-one, bit for bit" in out, out


def _simulator():
    """benchmarks/simulate_cores.py as a module (benchmarks/ is not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("simulate_cores", ROOT / "benchmarks" / "simulate_cores.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_the_core_simulation_replays_a_dependency_graph_longest_chain_first():
    """Three jobs: B waits for A (10 s each), C (5 s) and D (2 threads, 4 s) wait for nothing. On
    one core all in a row; on two, the chain A-B starts first and C, then D, fill the other core;
    on four, the chain alone; a job wanting more threads than there are cores gets them all."""
    sim = _simulator()
    jobs = [sim.Job("a", ["a"], [], 10.0), sim.Job("b", ["b"], ["a"], 10.0), sim.Job("c", ["c"], [], 5.0),
            sim.Job("d", ["d"], [], 4.0)]
    sim.link(jobs, {"d": 2})
    assert [job.after for job in jobs] == [set(), {0}, set(), set()]
    assert sim.chains(jobs) == [20.0, 10.0, 5.0, 4.0]
    assert sim.simulate(jobs, 1) == 29.0
    assert sim.simulate(jobs, 2) == 20.0 + 4.0  # A | C, then B | -, D needs both cores: after B
    assert sim.simulate(jobs, 4) == 20.0
