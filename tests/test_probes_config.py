"""Values that slipped through the configuration, probed as a user meets them: a dry run of the
smoke configuration with one more config file (or --config), through the real Snakemake.

Each must stop before any job with one ``gaugelab:`` message naming the key (and the file), and
no traceback.
"""

import subprocess
import sys
from pathlib import Path

import pytest
import torch

pytestmark = pytest.mark.workflow

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / "tests" / "config" / "smoke.yaml"
NO_CUDA = pytest.mark.skipif(torch.cuda.is_available(), reason="refusing cuda needs a machine without CUDA")


def dry_run(workdir, *args):
    cmd = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "--directory", str(workdir), "-n",
           "--configfile", str(SMOKE), *args]
    return subprocess.run(cmd, capture_output=True, text=True)


# (id, the extra config file's text or None, more arguments, what the message must say)
PROBES = [
    ("duplicate-seeds", None, ["--config", "seeds=[42, 042]"], "config key seeds: 42 is listed twice"),
    ("duplicate-lr", "zoo:\n  grids:\n    gd: [0.01, 1.0e-2]\n", [], "config key zoo/grids/gd: 0.01 is listed twice"),
    ("duplicate-init", "init_scale:\n  inits: [1.0e-3, 0.001]\n", [], "config key init_scale/inits: 0.001 is listed"),
    ("seed-past-the-generator", "seeds: [18446744073709551616]\n", [],
     "config key seeds/0: 18446744073709551616 is greater than the maximum of 9223372036854775800"),
    ("size-past-memory", "zoo:\n  n: 100000\n", [], "config key zoo/n: 100000 is greater than the maximum of 4096"),
    ("operator-past-memory", "zoo:\n  n: 400\n", [], "config key zoo/n: the measurement operator A would be"),
    ("cuda-without-cuda", "device: cuda\n", [], "config key device: cuda, but torch finds no CUDA"),
    ("table9-cuda-without-cuda", "table9:\n  step1_device: cuda\n", [],
     "config key table9/step1_device: cuda, but torch finds no CUDA"),
    ("duplicate-yaml-key", "seeds: [42]\nzoo: {n: 8}\nseeds: [1]\n", [],
     "{extra}: key seeds is given twice (lines 1 and 3)"),
    ("corpus-path", "data:\n  tinyshakespeare:\n    path: /nonexistent/input.txt\n", [],
     "gaugelab: config key data/tinyshakespeare/path: tiny-Shakespeare corpus not found at /nonexistent/input.txt"),
]


@pytest.mark.parametrize("text, args, message", [
    pytest.param(*probe[1:], id=probe[0], marks=[NO_CUDA] if "cuda" in probe[0] else []) for probe in PROBES])
def test_a_value_that_slipped_through_stops_the_dry_run_naming_the_key(tmp_path, text, args, message):
    extra = tmp_path / "extra.yaml"
    if text is not None:
        extra.write_text(text)
        args = [str(extra), *args]  # after the smoke configuration, as a second --configfile
    proc = dry_run(tmp_path / "work", *args)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert message.format(extra=extra) in proc.stderr, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and 'File "' not in proc.stderr  # a user error, not a crash
    assert not (tmp_path / "work" / "results").exists()


def test_the_smoke_configuration_itself_plans_its_jobs(tmp_path):
    """The probes' baseline: the same dry run without the bad value goes through."""
    proc = dry_run(tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
