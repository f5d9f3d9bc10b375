"""The one place that sets global numeric state (gaugelab.core.runtime): the numerics mode, native by
default, and the portable contract read back from the libraries, in every way the engine starts."""

import json
import os
import subprocess
import sys

import pytest

from gaugelab.core import runtime

CHECK = """
import torch
from gaugelab.core import runtime
runtime.configure(threads=1)
print(torch.are_deterministic_algorithms_enabled(), torch.get_num_threads())
"""
ENVIRONMENT = """
import json
from gaugelab.core import runtime
runtime.configure(threads=2)
print(json.dumps(runtime.environment("float32", "cpu")))
"""


def python(code, **env):
    """Run ``code`` in a fresh interpreter with the mode's and the contract's variables as the
    caller sets them."""
    base = {k: v for k, v in os.environ.items() if k not in (*runtime.CONTRACT_ENV, runtime.MODE_VARIABLE)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**base, **env})


def portable(code, **env):
    """:func:`python` under the portable mode."""
    return python(code, **{runtime.MODE_VARIABLE: runtime.PORTABLE, **env})


@pytest.mark.parametrize("run", [python, portable])
def test_configure_sets_determinism_and_threads(run):
    proc = run(CHECK)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "1"]


def test_configure_leaves_the_compiler_unloaded_and_sets_its_flag_where_it_is_loaded():
    """set_deterministic: torch's switch on, without importing torch.compile's stack (2 s of
    every job's start); a process that has loaded the compiler gets the compiler's flag as well."""
    for load, expect in (("", "True False None"), ("import torch._inductor.config", "True True True")):
        code = (f"import sys, torch\n{load}\nfrom gaugelab.core import runtime\nruntime.configure(threads=1)\n"
                "c = sys.modules.get('torch._inductor.config')\n"
                "print(torch.are_deterministic_algorithms_enabled(), c is not None, c and c.deterministic)")
        proc = python(code)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.split() == expect.split(), (load, proc.stdout)


def test_the_suite_runs_in_the_mode_the_environment_asks_for():
    """conftest configures this process as a job is configured: native unless GAUGELAB_NUMERICS
    says otherwise, the portable contract in effect where it does."""
    assert runtime.check_numerics() == os.environ.get(runtime.MODE_VARIABLE, runtime.NATIVE)
    if runtime.mode() == runtime.PORTABLE:
        assert (runtime.mkl_mode(), runtime.isa()) == (runtime.MKL_MODE, runtime.ISA)


def test_native_is_the_default_and_leaves_the_machines_kernels_alone():
    proc = python(ENVIRONMENT)
    assert proc.returncode == 0, proc.stderr
    env = json.loads(proc.stdout)
    assert env["numerics"] == "native" and env["blas_mode"] != "COMPATIBLE,STRICT"
    assert env["isa"] == python("import torch; print(torch.backends.cpu.get_cpu_capability())").stdout.strip()


def test_import_gaugelab_puts_the_portable_contract_in_effect_and_records_say_so():
    proc = portable(ENVIRONMENT)
    assert proc.returncode == 0, proc.stderr
    env = json.loads(proc.stdout)
    assert env["numerics"] == "x86-portable" and env["blas_mode"] == "COMPATIBLE,STRICT" and env["isa"] == "AVX2"
    assert env["threads"] == 2 and env["blas"].startswith("MKL ")
    assert env["cpu"]["vendor"] and env["cpu"]["model"]


@pytest.mark.parametrize("variable, value, named", [
    ("MKL_CBWR", "AVX2", "MKL's reproducibility mode is AUTO"),   # unsupported off Intel: MKL falls back
    ("MKL_CBWR", "AUTO", "MKL's reproducibility mode is AUTO"),
    ("ATEN_CPU_CAPABILITY", "default", "ATen's kernels are DEFAULT"),
    ("GAUGELAB_NUMERICS", "fast", "GAUGELAB_NUMERICS='fast'"),
])
def test_a_job_refuses_to_run_when_the_contract_is_not_in_effect(variable, value, named):
    if variable == "MKL_CBWR" and value == "AVX2" and runtime.cpu()["vendor"] == "GenuineIntel":
        pytest.skip("on an Intel CPU MKL accepts the AVX2 branch")
    proc = portable(ENVIRONMENT, **{variable: value})
    assert proc.returncode != 0 and named in proc.stderr.splitlines()[-1], proc.stderr[-2000:]


def test_torch_arithmetic_before_gaugelab_is_refused():
    """The libraries fix their modes at their first call: too late for the contract."""
    proc = portable("import torch; torch.randn(64, 64) @ torch.randn(64, 64); torch.randn(99).sum()\n" + ENVIRONMENT)
    last = proc.stderr.splitlines()[-1]
    assert proc.returncode != 0 and "numerics contract not in effect" in last and "import gaugelab before" in last


def test_asking_for_native_is_recorded():
    proc = python(ENVIRONMENT, GAUGELAB_NUMERICS="native")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["numerics"] == "native"


# A machine where the portable contract cannot hold (an ARM or Apple-silicon laptop): Python
# reports another architecture from the start of the interpreter (sitecustomize).
AARCH64 = "import platform\nplatform.machine = lambda: 'aarch64'\n"


def elsewhere(tmp_path):
    """The environment variables of a process that reports an aarch64 CPU."""
    (tmp_path / "sitecustomize.py").write_text(AARCH64)
    return {"PYTHONPATH": os.pathsep.join([str(tmp_path), *filter(None, [os.environ.get("PYTHONPATH")])])}


def test_portable_is_refused_by_name_where_it_cannot_hold_and_native_runs(tmp_path):
    env = elsewhere(tmp_path)
    native = python(ENVIRONMENT, **env)
    assert native.returncode == 0 and json.loads(native.stdout)["numerics"] == "native", native.stderr
    proc = portable(ENVIRONMENT, **env)
    last = proc.stderr.splitlines()[-1]
    assert proc.returncode != 0 and "numerics: 'portable' cannot hold on this machine: the CPU is aarch64" in last


def test_without_mkl_portable_is_unavailable(monkeypatch):
    import torch

    monkeypatch.setattr(torch.backends.mkl, "is_available", lambda: False)
    assert runtime.portable_unavailable() == "torch has no MKL here"


def test_the_cli_refuses_in_one_line_naming_the_setting(tmp_path):
    out = tmp_path / "run.json"
    base = {k: v for k, v in os.environ.items() if k not in runtime.CONTRACT_ENV}
    proc = subprocess.run([sys.executable, "-m", "gaugelab.cli", "sensing", "--method", "adam", "--lr", "0.01",
                           "--seed", "42", "--budget", "10", "-o", str(out)],
                          capture_output=True, text=True,
                          env={**base, "MKL_CBWR": "AUTO", runtime.MODE_VARIABLE: runtime.PORTABLE})
    assert proc.returncode == 2 and not out.exists()
    assert proc.stderr.count("\n") == 1 and "MKL_CBWR='AUTO'" in proc.stderr and "Traceback" not in proc.stderr
