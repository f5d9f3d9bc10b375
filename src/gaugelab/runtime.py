"""The one place that sets global torch state: dtype, device, threads, determinism.

Every run goes through :func:`configure`, and its record carries :func:`environment`.
"""

from __future__ import annotations

import os
import platform
import sys

import torch

DTYPES = {"float32": torch.float32, "float64": torch.float64}
CUBLAS_SETTING = ":4096:8"


def resolve_device(device: str = "cpu") -> torch.device:
    """``auto`` picks CUDA when present; ``cuda`` without a GPU is an error, not a fallback."""
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device 'cuda' requested but no CUDA device is available")
    if device not in ("cpu", "cuda"):
        raise ValueError(f"unknown device {device!r}; use auto, cpu or cuda")
    return torch.device(device)


def resolve_dtype(dtype: str) -> torch.dtype:
    try:
        return DTYPES[dtype]
    except KeyError:
        raise ValueError(f"unknown dtype {dtype!r}; use one of {sorted(DTYPES)}") from None


def configure(threads: int | None = None, device: str = "cpu", deterministic: bool = True) -> torch.device:
    """Apply thread count and deterministic algorithms; return the resolved device.

    On CUDA the cuBLAS workspace setting must already be in the environment (it is read when
    CUDA initialises), so it is checked here rather than set.
    """
    if threads:
        torch.set_num_threads(int(threads))
    dev = resolve_device(device)
    if dev.type == "cuda" and os.environ.get("CUBLAS_WORKSPACE_CONFIG") != CUBLAS_SETTING:
        raise RuntimeError(
            f"CUBLAS_WORKSPACE_CONFIG must be {CUBLAS_SETTING!r} before CUDA starts "
            "(set it in the environment; envs/cuda.yaml does)")
    _use_deterministic_algorithms(deterministic)
    return dev


def _use_deterministic_algorithms(mode: bool) -> None:
    """torch.use_deterministic_algorithms, less its import of torch's compiler (0.85 s a job here,
    to set a flag that only torch.compile reads, and nothing here compiles): the same switch."""
    if "torch._inductor.config" in sys.modules:
        torch.use_deterministic_algorithms(mode)
    else:
        torch._C._set_deterministic_algorithms(mode)


def environment(dtype: str, device: torch.device | str) -> dict:
    """What a record needs to say about where it was computed."""
    env = {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "platform": platform.platform(),
        "dtype": dtype,
        "device": str(device),
        "threads": torch.get_num_threads(),
        "deterministic": torch.are_deterministic_algorithms_enabled(),
    }
    if os.environ.get("SLURM_JOB_ID"):
        env["slurm_job_id"] = os.environ["SLURM_JOB_ID"]
    return env

