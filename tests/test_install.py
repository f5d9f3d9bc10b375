"""The CPU install resolves against a plain index configuration to requirements/cpu.lock exactly,
with torch's CPU build: no CUDA wheel (nvidia-*, triton, or a torch without +cpu).

.ci/run installs the lock with ``pip --isolated`` (this machine's pip settings play no part):
PyPI, and PyTorch's CPU index for torch or, where that index cannot be reached (this project's
machines reach PyPI only), the same-named wheel in the folder pip's configuration names. It keeps
pip's report (GAUGELAB_INSTALL_REPORT), which this test reads. Without that report (a developer's
run) the test makes the same resolve as a dry run (about 30 s, PyPI needed)."""

import json
import os
import re
import subprocess
import sys
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from test_deployment import LOCKS, canonical, lock_entries

PYPI = "https://pypi.org/simple"
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
WHEEL = re.compile(r"torch-[^-]+\+cpu-.+\.whl")


def torch_source():
    """Where torch's CPU wheel comes from: PyTorch's CPU index, or a local folder standing in."""
    try:
        urllib.request.urlopen(f"{CPU_INDEX}/torch/", timeout=10).close()
        return ["--extra-index-url", CPU_INDEX]
    except OSError:
        pass
    folder = subprocess.run([sys.executable, "-m", "pip", "config", "get", "global.find-links"],
                            check=False, capture_output=True, text=True).stdout.strip()
    if folder and any(WHEEL.fullmatch(p.name) for p in Path(folder).glob("torch-*.whl")):
        return ["--find-links", folder]
    pytest.skip(f"{CPU_INDEX} is unreachable and no local copy of its torch wheel is configured")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    path = os.environ.get("GAUGELAB_INSTALL_REPORT")
    if path and Path(path).exists():
        return json.loads(Path(path).read_text())
    if os.environ.get("CI"):
        pytest.fail("CI: .ci/run keeps pip's install report in GAUGELAB_INSTALL_REPORT")
    out = tmp_path_factory.mktemp("resolve") / "report.json"
    cmd = [sys.executable, "-m", "pip", "install", "--isolated", "--dry-run", "--ignore-installed", "--quiet",
           "--report", str(out), "--index-url", PYPI, *torch_source(), "-r", str(LOCKS["cpu.lock"])]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(out.read_text())


def test_the_cpu_install_pulls_no_cuda_wheel(report):
    installed = {canonical(item["metadata"]["name"]): item for item in report["install"]}
    cuda = sorted(name for name in installed if name.startswith("nvidia-") or name == "triton")
    assert not cuda, f"the CPU install would pull CUDA wheels: {cuda}"
    torch = installed["torch"]
    assert torch["metadata"]["version"].endswith("+cpu"), torch["metadata"]["version"]
    assert WHEEL.fullmatch(urllib.parse.unquote(torch["download_info"]["url"].rsplit("/", 1)[-1])), \
        torch["download_info"]


def test_the_cpu_install_is_the_lock_file_by_file(report):
    """Every package the lock names and nothing else, each file one of the lock's hashes, every
    file but torch's from PyPI."""
    lock = lock_entries(LOCKS["cpu.lock"])
    installed = {canonical(item["metadata"]["name"]): item for item in report["install"]}
    assert set(installed) == set(lock), sorted(set(installed) ^ set(lock))
    for name, item in installed.items():
        version, hashes = lock[name]
        assert item["metadata"]["version"] == version, name
        digest = item["download_info"]["archive_info"]["hash"].removeprefix("sha256=")
        assert digest in hashes, f"{name}: {digest} is not a locked hash"
        host = item["download_info"]["url"].split("/")[2]
        assert name == "torch" or host == "files.pythonhosted.org", (name, item["download_info"]["url"])
