"""Elementwise math whose bits do not depend on the CPU: square root, logarithm, exponential.

torch computes ``sqrt``, ``exp``, ``log``, ``sin`` and ``cos`` of a CPU tensor with MKL's vector
math library (VML), and ``pow(x, 0.5)`` is its ``sqrt``. VML's results depend on the CPU even
under the contract's COMPATIBLE branch: on an Intel Xeon, about one float32 ``sqrt`` in five is
not the correctly rounded one, and an Adam run made on an AMD EPYC could not be recomputed there
bit for bit under any MKL branch (docs/numerics.md). Every root, logarithm and exponential that
reaches a record therefore comes from here, built on operations whose result IEEE 754 fixes
(the processor's square root instruction behind numpy's ``sqrt``; ``+ - * /``, comparisons,
``nextafter``) or on the C library's scalar functions (glibc's ``exp``, ``log``, ``cos``: one code
path on every x86-64 CPU with AVX2 and FMA). On CUDA torch's own functions serve: CUDA's ``sqrt``
is the IEEE one.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from collections.abc import Callable
from torch import Tensor

# Raised whenever a function here changes its bits: it enters every record's settings digest
# (records.settings_digest), so records made with the former functions are set aside and rerun.
REVISION = 1
_SPLIT = 134217729.0  # 2**27 + 1: Veltkamp's constant, splits a float64 into two 26-bit halves
_SMALL, _LARGE = 2.0**-500, 2.0**500  # outside this range scale by an even power of two first


def sqrt(x: Tensor) -> Tensor:
    """The correctly rounded square root, the same bits on every CPU.

    numpy's ``sqrt`` is the processor's square root instruction (IEEE 754 rounds it correctly),
    one pass over the data. A tensor that autograd tracks, or of a dtype numpy lacks, takes
    :func:`sqrt_from_ieee_ops`, the same bits from torch's operations.
    """
    if x.device.type != "cpu":
        return torch.sqrt(x)
    if x.requires_grad or x.dtype not in (torch.float32, torch.float64):
        return sqrt_from_ieee_ops(x)
    root = torch.empty_like(x)
    with np.errstate(invalid="ignore"):  # a negative x gives NaN, as torch.sqrt does
        np.sqrt(x.numpy(), out=root.numpy())
    return root


def sqrt_from_ieee_ops(x: Tensor) -> Tensor:
    """The correctly rounded square root of a CPU tensor from torch operations that IEEE 754 fixes.

    float32 and narrower: 1/rsqrt in float64 is within 1.5·2⁻⁵² of the true root, closer than
    any float32 halfway point can be (at least 2⁻⁵¹ relative: Figueroa's double-rounding bound
    for square roots), so rounding it to float32 is exact. float64: Tuckerman's test on that
    estimate, with exact products (Dekker), moves it to the correctly rounded neighbour. About
    thirty passes over a float64 tensor: :func:`sqrt` takes numpy's where it can.
    """
    if x.dtype != torch.float64:
        return _estimate(x.double()).to(x.dtype)
    regular = (x > 0) & (x < math.inf)
    safe = torch.where(regular, x, 1.0)
    small, large = safe < _SMALL, safe > _LARGE
    scaled = torch.where(small, safe * 2.0**600, torch.where(large, safe * 2.0**-600, safe))  # exact
    root = _estimate(scaled)
    for _ in range(2):  # the estimate is within one unit in the last place; a second pass proves it
        halves = _split(root)
        up = torch.nextafter(root, torch.full_like(root, math.inf))
        down = torch.nextafter(root, torch.zeros_like(root))
        above = _exceeds_product(scaled, root, halves, up)  # sqrt(x) beyond the midpoint to up
        below = ~_exceeds_product(scaled, root, halves, down)  # sqrt(x) short of the midpoint to down
        root = torch.where(above, up, torch.where(below, down, root))
    root = torch.where(small, root * 2.0**-300, torch.where(large, root * 2.0**300, root))  # exact
    special = torch.where((x == 0) | (x == math.inf), x, math.nan)  # ±0, +inf; NaN for the rest
    return torch.where(regular, root, special)


def log(x: Tensor) -> Tensor:
    """Natural logarithm: torch.xlogy(1, x), whose CPU kernel calls the C library's log."""
    if x.device.type != "cpu":
        return torch.log(x)
    return torch.xlogy(torch.ones_like(x), x)


def exp(x: Tensor) -> Tensor:
    """Exponential, for small tensors (one value per run): the C library's exp on CPU."""
    return scalar_map(math.exp, x) if x.device.type == "cpu" else torch.exp(x)


def power(x: Tensor, p: float) -> Tensor:
    """x**p. p = 1/2 is :func:`sqrt` (torch's pow(x, 0.5) is VML's sqrt); otherwise torch.pow,
    SLEEF's vectorised pow at ATen's fixed AVX2 level (its scalar tail is the C library's pow)."""
    return sqrt(x) if p == 0.5 else x.pow(p)


def scalar_map(fn: Callable[[float], float], x: Tensor) -> Tensor:
    """``fn`` from Python's math module (the C library) on each element of a small CPU tensor."""
    values = [fn(v) for v in x.reshape(-1).tolist()]
    return torch.tensor(values, dtype=torch.float64).to(x.device, x.dtype).reshape(x.shape)


def _estimate(x: Tensor) -> Tensor:
    """1/rsqrt(x): torch's rsqrt is 1/(hardware square root), two correctly rounded steps."""
    return torch.rsqrt(x).reciprocal()


def _exceeds_product(x: Tensor, a: Tensor, a_halves: tuple[Tensor, Tensor], b: Tensor) -> Tensor:
    """x > a·b exactly (``a_halves``: a's split): a·b = p + e (Dekker's two-product), and x - p is
    exact (Sterbenz) because a·b is within a few units of x here."""
    a_hi, a_lo = a_halves
    p = a * b
    b_hi, b_lo = _split(b)
    e = ((a_hi * b_hi - p) + a_hi * b_lo + a_lo * b_hi) + a_lo * b_lo
    return (x - p) > e


def _split(a: Tensor) -> tuple[Tensor, Tensor]:
    """Veltkamp's split: a = hi + lo exactly, each half 26 bits or fewer."""
    t = _SPLIT * a
    hi = t - (t - a)
    return hi, a - hi
