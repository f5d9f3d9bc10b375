"""The one place that sets global numeric state: the numerics mode, dtype, device, threads,
determinism.

Two numerics modes, chosen with the workflow's ``numerics`` key or ``GAUGELAB_NUMERICS``:

- ``native`` (the default): the machine's own fastest kernels, on any CPU architecture (and CUDA
  where asked). Deterministic on one machine at one thread count and grouping of runs; bits may
  differ across CPUs, thread counts and groupings, which the comparison's tolerances and its
  ensembles of perturbed reruns absorb.
- ``portable``: an archival contract that makes a run's bits the same on every x86-64 machine with
  AVX2, Intel or AMD, at any thread count and grouping; needs torch built with MKL. It has two
  halves, both read once, when the library first needs them, so :func:`apply_contract` (run by
  ``import gaugelab``, before any torch arithmetic) puts them in the environment, where jobs,
  workers and the CLI inherit them:

  - MKL's conditional numerical reproducibility, branch COMPATIBLE (strict asked for too). It is
    the only branch MKL supports on non-Intel CPUs: on an AMD EPYC, ``MKL_CBWR=AVX2`` silently falls
    back to AUTO and ``mkl_cbwr_set(AVX2)`` returns "unsupported branch" (measured). Strict mode does
    not cover this branch (a GEMM split over two threads rounds differently, measured), so
    :func:`set_threads` (called by :func:`configure`) also keeps MKL on one thread in the calling
    thread; torch still parallelises over batches and elements, where MKL runs sequentially in each
    worker anyway.
  - ATen's CPU kernels at the AVX2 level: without it ATen picks AVX-512 where the CPU has it, and
    vector width changes the order of every reduction.

  No setting makes MKL's vector math (torch's CPU ``sqrt``, ``exp``, ``log``) the same on every
  vendor, so the engine takes those functions from :mod:`gaugelab.core.portable` in both modes.

Every run goes through :func:`configure`, which under ``portable`` reads both settings back from
the libraries and refuses to run when they are not in effect; records say which mode made them
(:func:`environment`).
"""

from __future__ import annotations

import ctypes
import os
import platform
import re
from functools import cache
from pathlib import Path

MODE_VARIABLE = "GAUGELAB_NUMERICS"
NATIVE, PORTABLE = "native", "portable"  # the modes a user asks for (the workflow's `numerics` key)
MODES = (NATIVE, PORTABLE)
# How a record names the mode it was made under: the portable mode's bits hold across x86-64 CPUs.
RECORDED = {NATIVE: "native", PORTABLE: "x86-portable"}
MKL_MODE = "COMPATIBLE,STRICT"
ISA = "AVX2"
CUBLAS_SETTING = ":4096:8"
# What the contract exports, each read by its library when it first starts.
CONTRACT_ENV = {
    "MKL_CBWR": MKL_MODE,             # MKL's reproducibility mode (mkl_cbwr_get reads it back)
    "MKL_DYNAMIC": "FALSE",           # MKL may not change its thread count behind our back
    "ATEN_CPU_CAPABILITY": ISA.lower(),  # ATen's kernel level (torch.backends.cpu reads it back)
    "CUBLAS_WORKSPACE_CONFIG": CUBLAS_SETTING,  # deterministic cuBLAS, read when CUDA starts
}
DTYPES = ("float32", "float64")
# mkl_service.h: the branch codes mkl_cbwr_get returns, and the strict flag.
_MKL_BRANCHES = {0: "OFF", 1: "OFF", 2: "AUTO", 3: "COMPATIBLE", 4: "SSE2", 6: "SSSE3", 7: "SSE4_1",
                 8: "SSE4_2", 9: "AVX", 10: "AVX2", 11: "AVX512_MIC", 12: "AVX512", 13: "AVX512_MIC_E1",
                 14: "AVX512_E1"}
_MKL_STRICT, _MKL_ALL = 0x10000, -1


class NumericsError(RuntimeError):
    """The numerics contract is asked for but not in effect; the message says what is wrong."""


def mode() -> str:
    """The numerics mode asked for: ``native`` (the default) or ``portable``."""
    value = os.environ.get(MODE_VARIABLE, NATIVE)
    if value not in MODES:
        raise NumericsError(f"{MODE_VARIABLE}={value!r}: use {NATIVE!r} (the default) or {PORTABLE!r}")
    return value


def recorded_mode() -> str:
    """The mode in effect as records name it (:data:`RECORDED`)."""
    return RECORDED[mode()]


def apply_contract() -> None:
    """Under ``portable``, export the contract's settings; a value the user set is kept, and
    :func:`check_numerics` then says that it breaks the contract. Either way, the cuBLAS setting
    that deterministic CUDA needs."""
    if os.environ.get(MODE_VARIABLE, NATIVE) != PORTABLE:
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", CUBLAS_SETTING)
        return
    for key, value in CONTRACT_ENV.items():
        os.environ.setdefault(key, value)


def portable_unavailable() -> str | None:
    """Why this machine cannot hold the portable contract (None where it can): it needs an x86-64
    CPU with AVX2 and torch built with MKL, whose reproducibility branches the contract sets."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return f"the CPU is {platform.machine()}, not x86-64"
    if cpu_flags() and "avx2" not in cpu_flags():  # unread flags: the job's check_numerics decides
        return "the CPU has no AVX2"
    import torch

    if not torch.backends.mkl.is_available():
        return "torch has no MKL here"
    return None


@cache
def _mkl(name: str):
    """One of MKL's C service functions (int -> int), from the library torch links MKL into;
    None without MKL."""
    import torch

    if not torch.backends.mkl.is_available():
        return None
    lib = ctypes.CDLL(str(Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"))
    try:
        function = getattr(lib, name)
    except AttributeError:
        return None
    function.argtypes, function.restype = [ctypes.c_int], ctypes.c_int
    return function


def mkl_mode() -> str | None:
    """MKL's reproducibility mode as MKL reports it (``COMPATIBLE,STRICT``), None without MKL."""
    get = _mkl("mkl_serv_cbwr_get")
    if get is None:
        return None
    setting = get(_MKL_ALL)
    branch = _MKL_BRANCHES.get(setting & 0xFFFF, f"code {setting & 0xFFFF}")
    return branch + (",STRICT" if setting & _MKL_STRICT else "")


def available_mode() -> str:
    """The mode asked for, refused by name where this machine cannot hold it: what the workflow
    checks before any job starts, and every job again."""
    wanted = mode()
    why = portable_unavailable() if wanted == PORTABLE else None
    if why:
        raise NumericsError(f"numerics: {PORTABLE!r} cannot hold on this machine: {why}; use numerics: "
                            f"{NATIVE!r} (the default), the machine's own kernels")
    return wanted


def isa() -> str:
    """The kernel level ATen dispatches to (AVX2, AVX512, DEFAULT, ...)."""
    import torch

    return torch.backends.cpu.get_cpu_capability()


def check_numerics() -> str:
    """The mode in effect; under the contract, raise :class:`NumericsError` naming what is off."""
    if available_mode() == NATIVE:
        return NATIVE
    problems = []
    got = mkl_mode()
    if got != MKL_MODE:
        problems.append(f"MKL's reproducibility mode is {got} (MKL_CBWR={os.environ.get('MKL_CBWR')!r}), "
                        f"not {MKL_MODE}")
    if isa() != ISA:
        problems.append(f"ATen's kernels are {isa()} (ATEN_CPU_CAPABILITY="
                        f"{os.environ.get('ATEN_CPU_CAPABILITY')!r}), not {ISA}")
    if problems:
        raise NumericsError(
            "numerics contract not in effect: " + "; ".join(problems) + ". Unset those variables and "
            "import gaugelab before running any torch code, or use the default numerics "
            f"{NATIVE!r} ({MODE_VARIABLE}={NATIVE})")
    return PORTABLE


def resolve_device(device: str = "cpu"):
    """``auto`` picks CUDA when present; ``cuda`` without a GPU is an error, not a fallback."""
    import torch

    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device 'cuda' requested but no CUDA device is available")
    if device not in ("cpu", "cuda"):
        raise ValueError(f"unknown device {device!r}; use auto, cpu or cuda")
    return torch.device(device)


def resolve_dtype(dtype: str):
    import torch

    if dtype not in DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}; use one of {sorted(DTYPES)}")
    return getattr(torch, dtype)


def configure(threads: int | None = None, device: str = "cpu", deterministic: bool = True):
    """Check the numerics contract, apply thread count and deterministic algorithms; return the
    resolved device.

    On CUDA the cuBLAS workspace setting must already be in the environment (it is read when
    CUDA initialises; :func:`apply_contract` puts it there), so it is checked here rather than set.
    """
    import torch

    check_numerics()
    set_threads(threads or torch.get_num_threads())
    dev = resolve_device(device)
    if dev.type == "cuda" and os.environ.get("CUBLAS_WORKSPACE_CONFIG") != CUBLAS_SETTING:
        raise RuntimeError(
            f"CUBLAS_WORKSPACE_CONFIG must be {CUBLAS_SETTING!r} before CUDA starts "
            "(set it in the environment; envs/cuda.yaml does)")
    set_deterministic(deterministic)
    return dev


def set_deterministic(deterministic: bool) -> None:
    """torch's deterministic-algorithms switch. ``torch.use_deterministic_algorithms`` also sets
    torch.compile's flag, and importing the compiler's config to do so costs every process about
    2 s of start-up (measured: a job that trains for 1 s took 5 s); nothing in gaugelab compiles,
    so the compiler's flag is set only where the compiler is loaded already."""
    import sys

    import torch

    if "torch._inductor.config" in sys.modules or not hasattr(torch._C, "_set_deterministic_algorithms"):
        torch.use_deterministic_algorithms(deterministic)
    else:
        torch._C._set_deterministic_algorithms(deterministic, warn_only=False)  # the public call's own step
    if torch.are_deterministic_algorithms_enabled() != deterministic:
        raise NumericsError(f"torch did not take deterministic algorithms = {deterministic}")


def set_threads(threads: int) -> None:
    """torch's thread count; under the contract MKL's calls from this thread stay sequential
    (torch.set_num_threads alone would hand MKL the same count)."""
    import torch

    torch.set_num_threads(int(threads))
    if mode() == PORTABLE:
        # torch hands MKL its thread count again at a thread's first parallel region: have it now.
        torch.ones(1 << 16).add_(1)  # large enough for a parallel region (grain 32768)
        _mkl("mkl_serv_set_num_threads_local")(1)


@cache
def cpu_flags() -> frozenset:
    """The CPU's feature flags as the kernel reports them (empty where it does not)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return frozenset()
    found = re.search(r"^flags\s*:\s*(.+)$", text, re.MULTILINE)
    return frozenset(found[1].split()) if found else frozenset()


@cache
def cpu() -> dict:
    """The CPU's vendor and model, as the kernel reports them."""
    info = {"vendor": platform.processor() or platform.machine(), "model": platform.machine()}
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return info
    for key, field in (("vendor", "vendor_id"), ("model", "model name")):
        found = re.search(rf"^{field}\s*:\s*(.+)$", text, re.MULTILINE)
        if found:
            info[key] = found[1].strip()
    return info


@cache
def blas() -> str:
    """The BLAS torch was built with, as torch reports it."""
    import torch

    found = re.search(r"Math Kernel Library Version ([\d.]+)", torch.__config__.show())
    if found:
        return f"MKL {found[1]}"
    return "MKL" if torch.backends.mkl.is_available() else "not MKL"


def blas_threads() -> int | None:
    """The threads MKL would use for a call from this thread (1 under the contract)."""
    get = _mkl("mkl_serv_get_max_threads")
    return None if get is None else get(0)


def environment(dtype: str, device) -> dict:
    """What a record needs to say about where it was computed and under which numerics."""
    import torch

    env = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "platform": platform.platform(),
        "dtype": dtype,
        "device": str(device),
        "threads": torch.get_num_threads(),
        "deterministic": torch.are_deterministic_algorithms_enabled(),
        "numerics": recorded_mode(),
        "cpu": cpu(),
        "isa": isa(),
        "blas": blas(),
        "blas_mode": mkl_mode(),
        "blas_threads": blas_threads(),
    }
    if os.environ.get("SLURM_JOB_ID"):
        env["slurm_job_id"] = os.environ["SLURM_JOB_ID"]
    return env
