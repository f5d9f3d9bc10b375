"""gaugelab.core.portable: its square roots (numpy's, and the one from torch operations that
autograd can follow) are the correctly rounded ones (checked exactly, in rational arithmetic, and
against each other), its log and exp are the C library's, and the engine takes roots, logarithms
and exponentials from it alone."""

import math
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import torch

from gaugelab.core import portable

SOURCE = Path(portable.__file__).parents[1]  # src/gaugelab


def correctly_rounded(x: float, y: float, dtype) -> bool:
    """y = RN(sqrt(x)) in ``dtype``: sqrt(x) lies strictly between the halfway points around y."""
    info = np.finfo(np.float32 if dtype == torch.float32 else np.float64)
    step = np.float32 if dtype == torch.float32 else np.float64
    below = float(np.nextafter(step(y), step(0)))
    above = float(np.nextafter(step(y), step(info.max)))
    low, high = (Fraction(y) + Fraction(below)) / 2, (Fraction(y) + Fraction(above)) / 2
    return low * low < Fraction(x) < high * high


def spread(dtype, count: int, seed: int) -> torch.Tensor:
    """Positive values over the dtype's whole range, subnormals included."""
    g = torch.Generator().manual_seed(seed)
    low, high = (-149, 127) if dtype == torch.float32 else (-1074, 1023)
    exponents = torch.randint(low, high, (count,), generator=g)
    return torch.ldexp(1 + torch.rand(count, generator=g, dtype=torch.float64), exponents).to(dtype)


ROOTS = [portable.sqrt, portable.sqrt_from_ieee_ops]


@pytest.mark.parametrize("root", ROOTS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_sqrt_is_correctly_rounded_checked_exactly(dtype, root):
    x = spread(dtype, 3000, seed=5)
    x = x[(x > 0) & torch.isfinite(x)]
    squares = (torch.rand(1000, generator=torch.Generator().manual_seed(6), dtype=torch.float64) + 1).to(dtype) ** 2
    near_squares = torch.cat([squares, torch.nextafter(squares, squares + 1), torch.nextafter(squares, squares - 1)])
    for xs in (x, near_squares):
        ys = root(xs)
        wrong = [(a, b) for a, b in zip(xs.tolist(), ys.tolist()) if not correctly_rounded(a, b, dtype)]
        assert not wrong, f"{len(wrong)} roots not correctly rounded, first {wrong[0]}"


def test_float32_roots_agree_on_two_whole_binades():
    """Every float32 in [1, 4): every significand at both exponent parities, which is every case."""
    ones = (torch.arange(1 << 23, dtype=torch.int32) + (127 << 23)).view(torch.float32)  # [1, 2)
    x = torch.cat([ones, 2 * ones])
    assert torch.equal(portable.sqrt(x), portable.sqrt_from_ieee_ops(x))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_sqrt_keeps_shape_layout_and_autograd(dtype):
    """numpy's root on any layout torch hands it (a scalar, a transpose, an expanded view); a
    tensor autograd tracks gets the root from torch operations, and a gradient."""
    base = spread(dtype, 12, seed=9).reshape(3, 4)
    for x in (base[0, 0], base.mT, base[0].expand(5, 4)):
        assert torch.equal(portable.sqrt(x), portable.sqrt_from_ieee_ops(x))
    tracked = base.clone().requires_grad_()
    portable.sqrt(tracked).sum().backward()
    assert tracked.grad is not None and torch.isfinite(tracked.grad).all()


@pytest.mark.parametrize("root", ROOTS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_sqrt_of_special_values(dtype, root):
    x = torch.tensor([0.0, -0.0, math.inf, -math.inf, math.nan, -1.0, torch.finfo(dtype).max], dtype=dtype)
    y = root(x)
    assert y[0] == 0 and not y[0].signbit() and y[1] == 0 and y[1].signbit() and y[2] == math.inf
    assert y[3:6].isnan().all()
    assert y[6] == torch.from_numpy(np.sqrt(x[6:].numpy()))[0]


def test_power_of_one_half_is_the_square_root_and_other_powers_are_pow():
    x = spread(torch.float32, 1000, seed=7)
    assert torch.equal(portable.power(x, 0.5), portable.sqrt(x))
    assert torch.equal(portable.power(x, -0.25), x.pow(-0.25))


def test_log_and_exp_are_the_c_librarys():
    x = spread(torch.float64, 2000, seed=8)
    assert portable.log(x).tolist() == [math.log(v) for v in x.tolist()]
    small = torch.linspace(-30, 30, 501, dtype=torch.float64)
    assert portable.exp(small).tolist() == [math.exp(v) for v in small.tolist()]
    assert portable.log(torch.tensor([0.0])).item() == -math.inf


def test_the_engine_takes_roots_logs_and_exps_from_portable_alone():
    """torch's CPU sqrt, exp, log, sin and cos are MKL VML's, whose bits depend on the CPU."""
    vml = re.compile(r"torch\.(sqrt|exp|log|sin|cos)\(|\.(sqrt|exp|log|sin|cos)\(\)|\.pow\(0?\.5\)")
    found = [f"{path.relative_to(SOURCE)}:{n}: {line.strip()}"
             for path in sorted(SOURCE.rglob("*.py")) if path != SOURCE / "core" / "portable.py"
             for n, line in enumerate(path.read_text().splitlines(), 1) if vml.search(line.split("#")[0])]
    assert not found, "use gaugelab.core.portable:\n" + "\n".join(found)
