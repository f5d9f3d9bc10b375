"""Make the lock files and the env files' pip sections from pyproject.toml's ranges.

    pip install uv && python requirements/lock.py            # keep the locked versions
    pip install uv && python requirements/lock.py --upgrade  # the newest within the ranges

- ``requirements/cpu.lock``: the whole dependency tree of ``.[test,cluster]`` with every hash, for
  Linux x86-64 and CPython 3.11, with torch's CPU build (``torch==2.13.0+cpu``, served by PyTorch's
  CPU index only). The README's commands, .ci/run and envs/gaugelab.yaml, envs/cluster.yaml use it.
- ``requirements/cuda.lock``: the same tree with PyPI's torch 2.13.0, the CUDA build (its nvidia-*
  and triton wheels), for the ``gpu`` target; envs/cuda.yaml uses it.
- the pip section of each env file: the closure of its packages, pinned to the lock's versions.

uv resolves against PyPI (this machine's pip configuration plays no part). PyTorch's CPU index is
asked for torch where it can be reached; where it cannot (this project's machines), the
same-named wheel in a ``--find-links`` folder stands in for it (``--torch-wheels``, default: the
folder pip's configuration names). tests/test_deployment.py holds locks, ranges and env files
consistent.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PYPI = "https://pypi.org/simple"
TORCH = "2.13.0"
TARGET = ["--python-version", "3.11", "--python-platform", "x86_64-manylinux_2_28"]
# env file -> (lock, the pyproject requirement groups it carries)
ENVS = {
    "gaugelab.yaml": ("cpu.lock", ["dependencies"]),
    "cluster.yaml": ("cpu.lock", ["dependencies", "cluster"]),
    "cuda.yaml": ("cuda.lock", ["dependencies"]),
    "audit.yaml": ("cpu.lock", ["dependencies", "audit"]),
}
PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==(\S+)")


def cpu_index_reachable() -> bool:
    try:
        urllib.request.urlopen(f"{CPU_INDEX}/torch/", timeout=10).close()
        return True
    except OSError:
        return False


def pip_find_links() -> str:
    proc = subprocess.run([sys.executable, "-m", "pip", "config", "get", "global.find-links"],
                          check=False, capture_output=True, text=True)
    return proc.stdout.strip()


def locked(path: Path) -> dict[str, str]:
    """name -> version of every ``name==version`` line of a lock file."""
    pins = {}
    for line in path.read_text().splitlines():
        match = PIN.match(line)
        if match:
            pins[re.sub(r"[-_.]+", "-", match[1]).lower()] = match[2]
    return pins


HEADERS = {
    "cpu.lock": f"""\
# The whole dependency tree of gaugelab[test,cluster] with hashes: Linux x86-64, CPython 3.11,
# torch's CPU build. Install (README):
#   pip install --extra-index-url {CPU_INDEX} -r requirements/cpu.lock && pip install --no-deps -e .
# torch {TORCH}+cpu is on PyTorch's CPU index only (PyPI's Linux torch is the CUDA build), so no
# CUDA wheel can enter. Its hash is that of the file named torch-{TORCH}+cpu-cp311-cp311-
# manylinux_2_28_x86_64.whl (the index's name) that the lock was made from on a machine that does
# not reach the index; should the index serve other bytes, pip stops with a hash mismatch.
""",
    "cuda.lock": """\
# The same tree with PyPI's torch (the CUDA build: nvidia-* and triton wheels), for the `gpu`
# target on a Linux x86-64 GPU machine (README). Every other version equals requirements/cpu.lock.
#   pip install -r requirements/cuda.lock && pip install --no-deps -e .
""",
}


def compile_lock(out: Path, torch: str, sources: list[str], constraints: list[str], upgrade: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "pins.txt").write_text("\n".join([torch, *constraints]) + "\n")
        subprocess.run(["uv", "pip", "compile", str(ROOT / "pyproject.toml"), "--extra", "test", "--extra", "cluster",
                        "--generate-hashes", *TARGET, "--index-url", PYPI, *sources, "--constraint", "pins.txt",
                        "--custom-compile-command", "python requirements/lock.py", "--quiet", "-o", str(out),
                        *(["--upgrade"] if upgrade else [])], check=True, cwd=tmp)
    out.write_text(HEADERS[out.name] + out.read_text())


def closure(requirements: list[str], lock: Path, sources: list[str]) -> list[str]:
    """The pinned closure of ``requirements`` within ``lock`` (its versions as constraints)."""
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "in.txt").write_text("\n".join(requirements) + "\n")
        (Path(tmp) / "pins.txt").write_text("".join(f"{n}=={v}\n" for n, v in locked(lock).items()))
        proc = subprocess.run(["uv", "pip", "compile", "in.txt", "--constraint", "pins.txt", *TARGET,
                               "--index-url", PYPI, *sources, "--no-header", "--no-annotate", "--quiet"],
                              check=True, cwd=tmp, capture_output=True, text=True)
    return [line for line in proc.stdout.splitlines() if PIN.match(line)]


def write_env(path: Path, lines: list[str]) -> None:
    """Replace the pip section of an env file, leaving its comments and variables."""
    text = path.read_text()
    start = text.index("  - pip:\n") + len("  - pip:\n")
    end = start
    while text[end:].startswith("      - "):
        end = text.index("\n", end) + 1
    path.write_text(text[:start] + "".join(f"      - {line}\n" for line in lines) + text[end:])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--upgrade", action="store_true", help="newest versions within pyproject's ranges")
    parser.add_argument("--torch-wheels", help="a folder with PyTorch's CPU wheel, where its index is unreachable")
    args = parser.parse_args()
    if cpu_index_reachable():
        cpu_sources = ["--extra-index-url", CPU_INDEX, "--index-strategy", "unsafe-best-match"]
    else:
        folder = args.torch_wheels or pip_find_links()
        if not folder:
            sys.exit(f"{CPU_INDEX} is unreachable and no --torch-wheels folder was given")
        print(f"{CPU_INDEX} is unreachable: its wheel in {folder} stands in for it", file=sys.stderr)
        cpu_sources = ["--find-links", folder]
    req = ROOT / "requirements"
    compile_lock(req / "cpu.lock", f"torch=={TORCH}+cpu", cpu_sources, [], args.upgrade)
    others = [f"{n}=={v}" for n, v in locked(req / "cpu.lock").items() if n != "torch"]
    compile_lock(req / "cuda.lock", f"torch=={TORCH}", [], others, False)

    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for name, (lock, groups) in ENVS.items():
        requirements = [r for g in groups for r in (project[g] if g == "dependencies"
                                                     else project["optional-dependencies"][g])]
        if name != "cluster.yaml":  # the rule envs run scripts; Snakemake itself runs outside them
            requirements = [r for r in requirements if not r.startswith("snakemake[")]
        cpu = lock == "cpu.lock"
        lines = closure(requirements, req / lock, cpu_sources if cpu else [])
        write_env(ROOT / "envs" / name, ([f"--extra-index-url {CPU_INDEX}"] if cpu else []) + lines)


if __name__ == "__main__":
    main()
