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
