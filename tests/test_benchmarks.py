"""The speed benchmark runs end to end (no time is asserted), and the engine's records in worker
processes, one shard each, equal its records as one batch."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_sensing_benchmark_runs_and_shards_in_workers_give_the_same_records():
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "bench_sensing.py"), "--budget", "30",
         "--methods", "gd", "muon", "adafactor", "--threads", "2", "--workers", "2"],
        capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert "records in workers equal to the one-process engine's: yes" in out
    assert "speed-up, engine in workers:" in out
