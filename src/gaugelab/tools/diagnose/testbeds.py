"""The diagnostic's testbeds: the models a twin triplet trains.

A testbed (:class:`Testbed`) builds the base parameters, applies the gauge (or its identity
through the same path) and the noise, computes the loss and the compared output. ``sensing`` is
the matrix-sensing problem of sensing.md at a small size, in the run dtype; ``attention`` is the
Section 6 model (small) on modular addition, built from the attention twins' engine
(``transformer``, ``tasks``, ``harness``). Both use every step's full batch, so nothing but the
optimizer can make the identity twin differ.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import torch
from torch import Tensor

from ...attention import harness, tasks, transformer
from ...core import gauge
from ...sensing import runner, testbed
from ...core import portable
from .errors import DiagnoseError
from ...attention import configs

NOISE_SEED = 888
GAUGE_SEED = 777
TESTBEDS = ("sensing", "attention")


class Testbed(Protocol):
    """What the diagnostic needs from a model: parameters, the twin transforms, a loss and the
    output the twins are compared on. Parameters are plain tensors (no run dimension)."""

    name: str
    dtype: torch.dtype

    def initial(self) -> list[Tensor]: ...
    def gauge(self, params: list[Tensor], identity: bool = False) -> list[Tensor]: ...
    def noise(self, params: list[Tensor], sigma: float) -> list[Tensor]: ...
    def loss(self, params: Sequence[Tensor]) -> Tensor: ...
    def output(self, params: Sequence[Tensor]) -> Tensor: ...
    def describe(self) -> dict: ...


@dataclass
class SensingTestbed:
    """Matrix sensing (sensing.md §1) at a small size: X* = U*V*ᵀ, L = mean((A vec(UVᵀ) − y)²).

    Instance and factors are drawn as the zoo draws them (float32 on the CPU, cast to the run
    dtype, y recomputed after the cast: ``runner.prepare``); the gauge is the engine's
    ``gauge.gauge_action``; the compared output is W = UVᵀ, the only thing the loss sees.
    """

    n: int = 12
    rank: int = 2
    width: int = 12
    measurements_per_dof: float = 2.0
    init: float = 1e-3
    seed: int = 42
    gauge_seed: int = GAUGE_SEED
    noise_seed: int = NOISE_SEED
    dtype: torch.dtype = torch.float64
    name: str = "sensing"

    def __post_init__(self):
        exp = {"n": self.n, "rank": self.rank, "width": self.width,
               "measurements_per_dof": self.measurements_per_dof, "init": self.init}
        dtype_name = str(self.dtype).removeprefix("torch.")
        self.inst, u0, v0 = runner.prepare(exp, self.seed, dtype_name, torch.device("cpu"))
        self._initial = [u0, v0]

    def initial(self) -> list[Tensor]:
        return [p.clone() for p in self._initial]

    def gauge(self, params, identity=False):
        g = torch.Generator().manual_seed(self.gauge_seed)
        q = (torch.eye(self.width, dtype=self.dtype) if identity
             else gauge.haar_orthogonal(self.width, g, self.dtype))
        return list(gauge.gauge_action(params[0], params[1], q))

    def noise(self, params, sigma):
        g = torch.Generator().manual_seed(self.noise_seed)
        out = []
        for p in params:
            rms = portable.sqrt(p.pow(2).mean())
            out.append(p + sigma * rms * torch.randn(p.shape, generator=g, dtype=self.dtype))
        return out

    def loss(self, params):
        u, v = params
        return testbed.loss(self.inst, u[None], v[None])[0]

    def output(self, params):
        return gauge.product(params[0], params[1])

    def describe(self) -> dict:
        return {"testbed": self.name, "n": self.n, "rank": self.rank, "width": self.width,
                "m": self.inst.A.shape[-2], "init": self.init, "seed": self.seed,
                "gauge_seed": self.gauge_seed, "noise_seed": self.noise_seed}


@dataclass
class AttentionTestbed:
    """The bias-free attention model of Section 6 (attention.md §3) on modular addition, small.

    Built entirely from the attention twins' engine: ``transformer.initial_params`` (the CPU
    model's initialisation, cast to the run dtype), ``tasks.modular_addition`` (full batch),
    ``harness.gauge_rotations`` / ``harness.rotate_heads`` (a random orthogonal A per head on its
    W_Q, W_K row blocks; A = I through the same code for the identity twin) and
    ``harness.add_noise`` (every W_Q, W_K entry, here with σ times their RMS entry). The compared
    output is the validation logits; the loss is the mean cross-entropy on the training set.
    """

    # Its own sizes and seeds; the field list has the sensing testbed's shape, not its content.
    P: int = 13
    n_layer: int = 1
    d: int = 32
    n_head: int = 4
    init_seed: int = 42
    data_seed: int = 42
    train_fraction: float = 0.4
    gauge_seed: int = GAUGE_SEED
    noise_seed: int = NOISE_SEED
    dtype: torch.dtype = torch.float64
    name: str = "attention"

    def __post_init__(self):
        self.cfg = configs.mod_config(self.P, self.n_layer, self.d, self.n_head, prefix="diagnose")
        self.split = tasks.modular_addition(self.P, self.data_seed, self.train_fraction)
        base = transformer.initial_params(self.cfg, self.init_seed)  # seeds the global RNG (§3.2)
        self.names = list(base)
        self._initial = [base[n].to(self.dtype) for n in self.names]

    def _stacked(self, params) -> dict[str, Tensor]:
        return {n: p[None] for n, p in zip(self.names, params)}

    def initial(self) -> list[Tensor]:
        return [p.clone() for p in self._initial]

    def gauge(self, params, identity=False):
        cfg = self.cfg
        rotations = (torch.eye(cfg.hd, dtype=self.dtype).expand(cfg.n_layer, cfg.n_head, cfg.hd, cfg.hd)
                     if identity else harness.gauge_rotations(cfg, self.gauge_seed, self.dtype))
        stacked = {n: p.clone() for n, p in self._stacked(params).items()}
        harness.rotate_heads(stacked, cfg, rotations, run=0)
        return [stacked[n][0] for n in self.names]

    def noise(self, params, sigma):
        qk = [p for n, p in zip(self.names, params) if n.endswith((".W_Q", ".W_K"))]
        rms = float(portable.sqrt(torch.cat([p.reshape(-1) for p in qk]).pow(2).mean()))
        stacked = {n: p.clone() for n, p in self._stacked(params).items()}
        harness.add_noise(stacked, self.cfg, sigma * rms, self.noise_seed, run=0)
        return [stacked[n][0] for n in self.names]

    def loss(self, params):
        logits = transformer.forward(self._stacked(params), self.split.x_train, self.cfg)
        return transformer.loss(logits, self.split.y_train)[0]

    def output(self, params):
        return transformer.forward(self._stacked(params), self.split.x_val, self.cfg)[0]

    def describe(self) -> dict:
        return {"testbed": self.name, "config": self.cfg.name, "P": self.P, "L": self.n_layer, "d": self.d,
                "H": self.n_head, "init_seed": self.init_seed, "data_seed": self.data_seed,
                "train_fraction": self.train_fraction, "gauge_seed": self.gauge_seed, "noise_seed": self.noise_seed}


def make_testbed(name: str, dtype: torch.dtype, **size) -> Testbed:
    """A testbed by name; ``size`` overrides its defaults (sensing: n, rank, width, init, seed;
    attention: P, n_layer, d, n_head, init_seed …)."""
    if name == "sensing":
        return SensingTestbed(dtype=dtype, **size)
    if name == "attention":
        return AttentionTestbed(dtype=dtype, **size)
    raise DiagnoseError(f"unknown testbed {name!r}; use one of {', '.join(TESTBEDS)} or both")


def testbeds_of(choice: str) -> list[str]:
    """``sensing``, ``attention`` or ``both``."""
    if choice == "both":
        return list(TESTBEDS)
    if choice not in TESTBEDS:
        raise DiagnoseError(f"unknown testbed {choice!r}; use one of {', '.join(TESTBEDS)} or both")
    return [choice]
