"""The equivariance diagnostic (Section 6): put any optimizer through the twin triplet.

A claim "this optimizer respects the gauge" is tested the way the paper tests its five: train a
base copy and three twins side by side, each with its own optimizer state, and follow how far
each twin's *function* drifts from the base's.

* **gauge twin**: the base parameters moved along the symmetry (sensing: (U, V) ↦ (UQ, VQ), Q a
  Haar-random orthogonal matrix; attention: (A W_Q, A W_K) per head). Same function, different
  basis.
* **identity twin**: the same code path with Q = I. Multiplying by an exact identity is exact, so
  this copy is bit-identical to the base at every step, for *every* deterministic optimizer,
  equivariant or not. It is the determinism control.
* **noise twin**: the base parameters, same basis, perturbed by σ times their RMS entry
  (sensing: every factor; attention: every W_Q and W_K entry, as in the paper). It measures how
  much the optimizer's dynamics amplify a tiny function difference.

drift(z₁, z₂) = ‖z₁ − z₂‖ / (½(‖z₁‖ + ‖z₂‖) + 1e-12) over the testbed's output (sensing: the
represented matrix W = UVᵀ; attention: the validation logits), as in attention.md §9.1.

Verdicts and thresholds
-----------------------
Everything is derived from the machine epsilon ε of the run dtype (float64: 2.2e-16, float32:
1.2e-7), on a log scale between ε and 1:

* FLOOR = ε^(3/4) (float64: 1.8e-12 ≈ 8.2e3 ε; float32: 6.4e-6 ≈ 54 ε). "At the round-off
  floor": one function evaluated in two bases differs by a few ε at step 0, and a non-chaotic
  equivariant run only accumulates round-off slowly; a quarter of the dtype's decades above ε
  leaves room for that growth (measured on the default sensing testbed in float64: the engine's
  equivariant rules stay below 8e-15 over 100 steps; over 300, Muon's gauge twin grows through
  the floor near step 245, as its steps amplify round-off near convergence: chaotic) and is far
  below any structural split.
* σ = ε^(1/2) (float64: 1.5e-8; float32: 3.5e-4), the noise twin's relative perturbation, halfway
  between ε and 1 in decades, so it starts ε^(-1/4) above the floor.
* RATIO = 100: the structural split must exceed the noise twin by two decades at the step where
  the gauge twin leaves the floor (the paper's Adam splits by 10⁴ at step 1).
* DECADES = 1.0: a chaotic gauge twin tracks its noise twin. Amplified round-off grows through
  the floor gradually (its first value above the floor is ≤ 10 × FLOOR) and, starting ε^(-1/4)
  below the noise twin, catches up with it at most when the chaos saturates. So, from the step
  where it leaves the floor on, either max (g + ε)/(n + ε) ≤ 10^DECADES (g, n: the gauge and
  noise twins' drift; before saturation), or the Appendix D.5 decades metric,
  mean |log10((g + ε)/(n + ε))| over the second half of the run, is < DECADES (after
  saturation; its guard 1e-12 becomes ε so that float64 floor values are not masked).

The twins are compared at every step; the stored curves keep step 0, every step to 20, then
about 20 points per decade.

Applied in this order, first match wins:

1. ``determinism failure``: the identity twin is not bit-identical to the base (parameters and
   output, tested with ==) at some checkpoint. Nothing else can be read from the twins then.
2. ``inconclusive``: a copy's output went non-finite (diverged; lower the lr), or the base run's
   output moved by less than σ (relative), so no drift could have shown.
3. ``equivariant``: the gauge twin's drift stays ≤ FLOOR at every checkpoint.
4. ``basis-dependent``: at the first step s* where the gauge twin exceeds FLOOR (step 1 for
   Adam), its drift is ≥ RATIO × the noise twin's at s*. The evidence is s* and the ratio.
5. ``chaotic``: the gauge twin left the floor gradually, not by a structural split, and tracks
   its noise twin (DECADES above): the dynamics amplify round-off (Muon's
   Newton–Schulz on the paper's attention model, scalar-Adam on the small one here after ~50
   steps), not the basis.
6. ``inconclusive`` otherwise (the evidence says which numbers fell between the thresholds).

Optimizers
----------
:func:`resolve` accepts a name of the engine's registry (``adam``), or ``package.module:Attr``
where Attr is a :class:`torch.optim.Optimizer` subclass (constructed as ``Attr(params, lr=lr,
**options)``), a callable ``f(params, lr=..., **options)`` returning one, or a
:class:`gaugelab.optim.Rule` (or a callable that, called with ``**options`` only, returns one).
Engine rules run functionally with a leading run dimension of 1; torch optimizers run through
:class:`TorchStepper`, which hands ``step`` a closure (so LBFGS works too). Every copy owns its
optimizer, built from fresh parameters.

Testbeds
--------
A testbed (:class:`Testbed`) builds the base parameters, applies the gauge (or its identity
through the same path) and the noise, computes the loss and the compared output. ``sensing`` is
the matrix-sensing problem of sensing.md at a small size, in the run dtype; ``attention`` is the
Section 6 model (small) on modular addition, built from the attention twins' engine
(``transformer``, ``tasks``, ``twins``). Both use every step's full batch, so nothing but the
optimizer can make the identity twin differ.
"""

from __future__ import annotations

import importlib
import inspect
import math
import re
from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence

import torch
from torch import Tensor

from . import gauge, harness, optim, progress, records, runner, runtime, sensing

SCHEMA = records.DIAGNOSE_SCHEMA
RATIO = 100.0
DECADES = 1.0
NOISE_SEED = 888
GAUGE_SEED = 777
VERDICTS = ("equivariant", "basis-dependent", "chaotic", "determinism failure", "inconclusive")
TESTBEDS = ("sensing", "attention")


class DiagnoseError(ValueError):
    """Bad input to the diagnostic: an optimizer that cannot be imported or is not one, an
    unknown testbed. The message names the offending value."""


# --- thresholds ---------------------------------------------------------------------------------


def thresholds(dtype: torch.dtype) -> dict[str, float]:
    """The verdict thresholds of a dtype (module docstring): all derived from its epsilon."""
    eps = torch.finfo(dtype).eps
    return {"eps": eps, "floor": eps ** 0.75, "sigma": eps ** 0.5, "ratio": RATIO, "decades": DECADES}


def drift(z1: Tensor, z2: Tensor) -> float:
    """‖z₁ − z₂‖ / (½(‖z₁‖ + ‖z₂‖) + 1e-12): the attention twins' metric (``twins.drift``,
    attention.md §9.1), one definition for both testbeds."""
    from .twins import drift as twin_drift

    return twin_drift(z1.detach(), z2.detach())


def decades(g: float, n: float, guard: float) -> float:
    """dec = |log10((g + guard) / (n + guard))| (attention.md §9.4, guard = the dtype's ε)."""
    return abs(math.log10((g + guard) / (n + guard)))


def checkpoints(steps: int) -> list[int]:
    """Step 0, every step up to 20, then about 20 per decade, and the last step."""
    points = set(range(0, min(steps, 20) + 1))
    s = 20.0
    while s < steps:
        points.add(int(round(s)))
        s *= 10 ** (1 / 20)
    points.add(steps)
    return sorted(points)


# --- testbeds -----------------------------------------------------------------------------------


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


def haar_orthogonal(k: int, generator: torch.Generator, dtype: torch.dtype) -> Tensor:
    """Haar on O(k): QR of a k×k Gaussian drawn in ``dtype``, column signs fixed by diag(R)."""
    q, r = torch.linalg.qr(torch.randn(k, k, generator=generator, dtype=dtype))
    return q * torch.sign(torch.diagonal(r)).unsqueeze(0)


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
             else haar_orthogonal(self.width, g, self.dtype))
        return list(gauge.gauge_action(params[0], params[1], q))

    def noise(self, params, sigma):
        g = torch.Generator().manual_seed(self.noise_seed)
        out = []
        for p in params:
            rms = p.pow(2).mean().sqrt()
            out.append(p + sigma * rms * torch.randn(p.shape, generator=g, dtype=self.dtype))
        return out

    def loss(self, params):
        u, v = params
        return sensing.loss(self.inst, u[None], v[None])[0]

    def output(self, params):
        return gauge.product(params[0], params[1])

    def describe(self) -> dict:
        return {"testbed": self.name, "n": self.n, "rank": self.rank, "width": self.width,
                "m": self.inst.A.shape[-2], "init": self.init, "seed": self.seed,
                "gauge_seed": self.gauge_seed, "noise_seed": self.noise_seed}


@dataclass
class AttentionTestbed:
    """The bias-free attention model of Section 6 (attention.md §3) on modular addition, small.

    Built entirely from the attention twins' engine (issue 7): ``transformer.initial_params``
    (the CPU model's initialisation, cast to the run dtype), ``tasks.modular_addition`` (full
    batch), ``twins.gauge_rotations`` / ``twins.rotate_heads`` (a random orthogonal A per head on
    its W_Q, W_K row blocks; A = I through the same code for the identity twin) and
    ``twins.add_noise`` (every W_Q, W_K entry, here with σ times their RMS entry). The compared
    output is the validation logits; the loss is the mean cross-entropy on the training set.
    """

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
        from . import tasks, transformer

        self._transformer = transformer
        self.cfg = transformer.mod_config(self.P, self.n_layer, self.d, self.n_head, prefix="diagnose")
        self.split = tasks.modular_addition(self.P, self.data_seed, self.train_fraction)
        base = transformer.initial_params(self.cfg, self.init_seed)  # seeds the global RNG (§3.2)
        self.names = list(base)
        self._initial = [base[n].to(self.dtype) for n in self.names]

    def _stacked(self, params) -> dict[str, Tensor]:
        return {n: p[None] for n, p in zip(self.names, params)}

    def initial(self) -> list[Tensor]:
        return [p.clone() for p in self._initial]

    def gauge(self, params, identity=False):
        from . import twins

        cfg = self.cfg
        rotations = (torch.eye(cfg.hd, dtype=self.dtype).expand(cfg.n_layer, cfg.n_head, cfg.hd, cfg.hd)
                     if identity else twins.gauge_rotations(cfg, self.gauge_seed, self.dtype))
        stacked = {n: p.clone() for n, p in self._stacked(params).items()}
        twins.rotate_heads(stacked, cfg, rotations, run=0)
        return [stacked[n][0] for n in self.names]

    def noise(self, params, sigma):
        from . import twins

        qk = [p for n, p in zip(self.names, params) if n.endswith((".W_Q", ".W_K"))]
        rms = float(torch.cat([p.reshape(-1) for p in qk]).pow(2).mean().sqrt())
        stacked = {n: p.clone() for n, p in self._stacked(params).items()}
        twins.add_noise(stacked, self.cfg, sigma * rms, self.noise_seed, run=0)
        return [stacked[n][0] for n in self.names]

    def loss(self, params):
        t = self._transformer
        return t.loss(t.forward(self._stacked(params), self.split.x_train, self.cfg), self.split.y_train)[0]

    def output(self, params):
        return self._transformer.forward(self._stacked(params), self.split.x_val, self.cfg)[0]

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
        try:  # issue 7's engine: the model, the task and the twin transforms
            for module in ("tasks", "transformer", "twins"):
                importlib.import_module(f"{__package__}.{module}")
        except ImportError as exc:
            raise DiagnoseError(f"testbed 'attention' is not available yet: it needs the attention twins "
                                f"(gaugelab.twins, issue 7): {exc}; use --testbed sensing") from None
        return AttentionTestbed(dtype=dtype, **size)
    raise DiagnoseError(f"unknown testbed {name!r}; use one of {', '.join(TESTBEDS)} or both")


# --- optimizers ---------------------------------------------------------------------------------


class Stepper(Protocol):
    params: list[Tensor]

    def step(self, t: int) -> None: ...


class RuleStepper:
    """An engine rule driven functionally: a run dimension of 1, autograd gradients at the
    current point, increments added (the driver of identities.md §2)."""

    def __init__(self, rule: optim.Rule, params: list[Tensor], loss: Callable, lr: float):
        self.rule, self.loss, self.lr = rule, loss, lr
        self.params = [p.detach().clone() for p in params]
        self.state = rule.init([p[None] for p in self.params])

    def step(self, t: int) -> None:
        leaves = [p.clone().requires_grad_(True) for p in self.params]
        grads = torch.autograd.grad(self.loss(leaves), leaves)
        deltas, self.state = self.rule.update([g[None] for g in grads], self.state, self.lr, t)
        self.params = [p + d[0] for p, d in zip(self.params, deltas)]


class TorchStepper:
    """A torch.optim.Optimizer on leaf copies of the parameters. Each step sets ``.grad`` (zero,
    loss, backward) and calls ``step`` with a closure that does the same again, when ``step``
    takes one: closure optimizers such as LBFGS run, and so do optimizers that ignore the
    closure or take none (the recomputed gradients are the same bits)."""

    def __init__(self, build: Callable[[list[Tensor]], torch.optim.Optimizer], params: list[Tensor],
                 loss: Callable):
        self.loss = loss
        self.leaves = [torch.nn.Parameter(p.detach().clone()) for p in params]
        self.optimizer = build(self.leaves)
        try:
            self.takes_closure = len(inspect.signature(self.optimizer.step).parameters) > 0
        except (TypeError, ValueError):
            self.takes_closure = True

    @property
    def params(self) -> list[Tensor]:
        return [p.detach() for p in self.leaves]

    def _closure(self) -> Tensor:
        with torch.enable_grad():
            self.optimizer.zero_grad(set_to_none=True)
            value = self.loss(self.leaves)
            value.backward()
        return value

    def step(self, t: int) -> None:
        self._closure()
        if self.takes_closure:
            self.optimizer.step(self._closure)
        else:
            self.optimizer.step()


@dataclass
class OptimizerSpec:
    """A resolved ``--optimizer``: its label and how to build one stepper per copy."""

    label: str
    kind: str  # "engine" or "torch"
    source: str
    make: Callable[[list[Tensor], Callable, float | None], Stepper] = field(repr=False)
    equivariant: bool | None = None  # the engine's a-priori class, when known


def label_of(source: str) -> str:
    """A file-name-safe label: ``adam`` → adam, ``torch.optim:AdamW`` → torch_adamw."""
    if ":" not in source:
        return source
    module, attr = source.split(":", 1)
    head = "torch" if module == "torch.optim" else module.replace(".", "_")
    return re.sub(r"[^a-z0-9_]", "_", f"{head}_{attr.replace('.', '_')}".lower())


def _engine(source: str, rule: optim.Rule) -> OptimizerSpec:
    def make(params, loss, lr):
        if lr is None:
            raise DiagnoseError(f"{source}: engine rules have no default learning rate; pass --lr")
        return RuleStepper(rule, params, loss, lr)

    return OptimizerSpec(label_of(source), "engine", source, make, rule.equivariant)


def _import(source: str):
    module_name, _, attr = source.partition(":")
    if not module_name or not attr:
        raise DiagnoseError(f"optimizer {source!r}: use a registry name ({', '.join(sorted(optim.REGISTRY))}) "
                            "or package.module:Attr")
    try:
        obj = importlib.import_module(module_name)
    except ImportError as exc:
        raise DiagnoseError(f"optimizer {source!r}: cannot import module {module_name!r} ({exc})") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise DiagnoseError(f"optimizer {source!r}: module {module_name!r} has no attribute {attr!r}") from None
    return obj


def source_of(obj) -> str:
    """The ``package.module:Attr`` name of an optimizer object (a Rule: its registry name)."""
    if isinstance(obj, str):
        return obj
    if isinstance(obj, optim.Rule):
        return obj.name
    return f"{getattr(obj, '__module__', '?')}:{getattr(obj, '__qualname__', type(obj).__name__)}"


def resolve(source, **options) -> OptimizerSpec:
    """An optimizer from a registry name or ``package.module:Attr`` (module docstring), or the
    object itself (a class, factory or Rule, from Python); ``options`` are its keyword
    arguments. Raises :class:`DiagnoseError` naming the problem."""
    if not isinstance(source, str):
        obj, source = source, source_of(source)
    elif ":" not in source:
        if source not in optim.REGISTRY:
            raise DiagnoseError(f"unknown optimizer {source!r}: not in the engine's registry "
                                f"({', '.join(sorted(optim.REGISTRY))}) and not package.module:Attr")
        try:
            return _engine(source, optim.make(source, **options))
        except TypeError as exc:  # an option the rule does not take
            raise DiagnoseError(f"optimizer {source!r} rejects options {options}: {exc}") from None
    else:
        obj = _import(source)
    if isinstance(obj, optim.Rule):
        if options:
            raise DiagnoseError(f"optimizer {source!r} is a built Rule; it takes no options")
        return _engine(source, obj)
    if inspect.isclass(obj) and issubclass(obj, torch.optim.Optimizer):
        def build(leaves, lr):
            return obj(leaves, **options) if lr is None else obj(leaves, lr=lr, **options)
    elif callable(obj) and not inspect.isclass(obj):
        try:
            inspect.signature(obj).bind(**options)
            takes_params = False
        except TypeError:
            takes_params = True
        except ValueError:  # no signature (a builtin): treat as a torch factory
            takes_params = True
        if not takes_params:
            rule = obj(**options)
            if not isinstance(rule, optim.Rule):
                raise DiagnoseError(f"optimizer {source!r}: called with no parameters it returned "
                                    f"{type(rule).__name__}, not a gaugelab.optim.Rule")
            return _engine(source, rule)

        def build(leaves, lr):
            made = obj(leaves, **options) if lr is None else obj(leaves, lr=lr, **options)
            if not isinstance(made, torch.optim.Optimizer):
                raise DiagnoseError(f"optimizer {source!r} returned {type(made).__name__}, "
                                    "not a torch.optim.Optimizer")
            return made
    else:
        what = f"the class {obj.__name__}" if inspect.isclass(obj) else f"a {type(obj).__name__}"
        raise DiagnoseError(f"optimizer {source!r} is {what}, not a torch.optim.Optimizer subclass, a "
                            "factory returning one, or a gaugelab.optim.Rule")

    def make(params, loss, lr):
        try:
            return TorchStepper(lambda leaves: build(leaves, lr), params, loss)
        except DiagnoseError:
            raise
        except Exception as exc:  # the user's constructor: name it and say what it was given
            raise DiagnoseError(f"optimizer {source!r} could not be built on the testbed's parameters "
                                f"(lr={lr}, options={options}): {type(exc).__name__}: {exc}") from exc

    return OptimizerSpec(label_of(source), "torch", source, make)


# --- the triplet --------------------------------------------------------------------------------

COPIES = ("base", "gauge", "identity", "noise")
TWINS = ("gauge", "identity", "noise")
bit_identical = harness.bit_identical  # the one bit-level identity check (NaN == NaN, -0.0 != 0.0)


def run_triplet(testbed: Testbed, spec: OptimizerSpec, lr: float | None, steps: int,
                sigma: float) -> dict:
    """Base, gauge, identity and noise copies advanced in lockstep, each with its own optimizer.

    Every step compares each twin with the base (the drifts, and the identity twin bit for bit:
    parameters and output); the curves keep the :func:`checkpoints`, the verdict reads every
    step (``dense``). Also returns the base's movement and its initial and final loss. A testbed
    with a ``parts(params) -> {name: tensor}`` method (the audit's per-group invariants) has each
    part compared the same way: ``parts[name]`` holds its ``dense`` drifts and ``base_moved``.
    """
    base = testbed.initial()
    starts = {"base": base, "gauge": testbed.gauge(base), "identity": testbed.gauge(base, identity=True),
              "noise": testbed.noise(base, sigma)}
    copies = {name: spec.make(starts[name], testbed.loss, lr) for name in COPIES}
    marks = set(checkpoints(steps))
    dense = {twin: [] for twin in TWINS}
    identical, first_difference = True, None
    out0 = testbed.output(copies["base"].params)
    loss0 = float(testbed.loss(copies["base"].params))
    moved, diverged_at = 0.0, None
    parts_of = getattr(testbed, "parts", None)
    with torch.no_grad():
        parts0 = parts_of(copies["base"].params) if parts_of else {}
    parts = {key: {"dense": {twin: [] for twin in TWINS}, "base_moved": 0.0} for key in parts0}

    def compare(t: int) -> None:
        nonlocal identical, first_difference, moved
        with torch.no_grad():
            outs = {name: testbed.output(c.params) for name, c in copies.items()}
            pieces = {name: parts_of(c.params) for name, c in copies.items()} if parts_of else {}
        for twin in TWINS:
            dense[twin].append(drift(outs["base"], outs[twin]))
            for key, part in parts.items():
                part["dense"][twin].append(drift(pieces["base"][key], pieces[twin][key]))
        for key, part in parts.items():
            part["base_moved"] = drift(pieces["base"][key], parts0[key])
        same = bit_identical(copies["base"].params + [outs["base"]],
                             copies["identity"].params + [outs["identity"]])
        if not same and identical:
            identical, first_difference = False, t
        moved = drift(outs["base"], out0)

    compare(0)
    shown = progress.Progress(f"diagnose {spec.source} on {testbed.name}", 1, steps)
    for t in range(1, steps + 1):
        shown.update(t - 1, 0)
        for c in copies.values():
            try:
                c.step(t)
            except Exception as exc:  # the optimizer's own step: name it, keep the traceback
                raise DiagnoseError(f"optimizer {spec.source!r} failed at step {t} on {testbed.name}: "
                                    f"{type(exc).__name__}: {exc}") from exc
        compare(t)
        if not all(math.isfinite(dense[twin][-1]) for twin in TWINS):
            diverged_at = t
            marks.add(t)
            break
    shown.finish(len(dense["gauge"]) - 1)
    loss_final = float(testbed.loss(copies["base"].params).detach())
    kept = sorted(s for s in marks if s < len(dense["gauge"]))
    return {
        "step": kept,
        "drift": {twin: [dense[twin][s] for s in kept] for twin in TWINS},
        "dense": dense,
        "identity_bit_identical": identical,
        "identity_first_difference": first_difference,
        "base_moved": moved,
        "loss_initial": loss0,
        "loss_final": loss_final,
        "diverged_at": diverged_at,
        "parts": parts,
    }


def verdict(run: dict, limits: dict[str, float]) -> tuple[str, dict, str]:
    """The verdict of one triplet (module docstring, rules 1–6): (verdict, evidence, sentence).

    Reads the every-step drifts ``run["dense"]`` (index = step)."""
    g, n = run["dense"]["gauge"], run["dense"]["noise"]
    floor, eps = limits["floor"], limits["eps"]
    finite = [x for x in g if math.isfinite(x)] or [math.nan]
    ev: dict = {"gauge_max": max(finite), "noise_at_end": n[-1], "gauge_step1": g[1] if len(g) > 1 else math.nan,
                "noise_step1": n[1] if len(n) > 1 else math.nan, "base_moved": run["base_moved"]}
    if not run["identity_bit_identical"]:
        ev["identity_first_difference"] = run["identity_first_difference"]
        ev["identity_max"] = max(x for x in run["dense"]["identity"] if not math.isnan(x))
        return ("determinism failure", ev,
                f"identity twin not bit-identical (first at step {run['identity_first_difference']}, "
                f"drift up to {ev['identity_max']:.1e}): the optimizer is not a deterministic function "
                "of its inputs, so the gauge twin says nothing")
    if run["diverged_at"] is not None:
        ev["diverged_at"] = run["diverged_at"]
        return "inconclusive", ev, f"diverged at step {run['diverged_at']}; lower --lr"
    if not run["base_moved"] > limits["sigma"]:
        return ("inconclusive", ev, f"the base run's output moved by {run['base_moved']:.1e} < σ = "
                f"{limits['sigma']:.1e}; raise --lr or --steps")
    if ev["gauge_max"] <= floor:
        return ("equivariant", ev, f"gauge twin stays at the round-off floor (max drift {ev['gauge_max']:.1e} "
                f"≤ {floor:.1e}), {ev['noise_at_end'] / max(ev['gauge_max'], eps):.1e}× below its noise "
                f"twin at the end ({ev['noise_at_end']:.1e})")
    split = next(s for s, x in enumerate(g) if x > floor)
    ratio = g[split] / max(n[split], eps)
    above = max((g[s] + eps) / (n[s] + eps) for s in range(split, len(g)))
    late = range(max(1, math.ceil((len(g) - 1) / 2)), len(g))
    ev.update({"split_step": split, "gauge_at_split": g[split], "noise_at_split": n[split], "ratio": ratio,
               "max_gauge_over_noise": above,
               "late_decades": sum(decades(g[s], n[s], eps) for s in late) / len(late)})
    if ratio >= limits["ratio"]:
        return ("basis-dependent", ev, f"gauge twin splits at step {split} (drift {g[split]:.1e}), "
                f"{ratio:.1e}× its noise twin ({n[split]:.1e})")
    gradual = g[split] <= 10 * floor
    if gradual and (above <= 10 ** limits["decades"] or ev["late_decades"] < limits["decades"]):
        how = (f"stays within {limits['decades']:.0f} decade of its noise twin or below it (max ratio {above:.1e})"
               if above <= 10 ** limits["decades"] else
               f"tracks its noise twin ({ev['late_decades']:.2f} decades apart on average over steps ≥ {late[0]})")
        return ("chaotic", ev, f"gauge twin grows through the floor at step {split} and {how}: amplified "
                "round-off, not the basis")
    why = (f"jumps past the floor at step {split} ({g[split]:.1e} > 10× floor)" if not gradual
           else f"rises to {above:.1e}× its noise twin")
    return ("inconclusive", ev, f"gauge twin {why} without a structural split (ratio {ratio:.1e} at step "
            f"{split} < {limits['ratio']:.0f}): a weak basis effect or unresolved chaos; more steps or "
            "another lr may decide")


def diagnose(source: str, testbed: str = "sensing", *, steps: int = 100, lr: float | None = 1e-2,
             dtype: str = "float64", sigma: float | None = None, options: dict | None = None,
             size: dict | None = None, threads: int | None = 1) -> dict:
    """Run the triplet for one optimizer on one testbed; return the JSON report (a dict)."""
    spec = resolve(source, **(options or {}))
    torch_dtype = runtime.resolve_dtype(dtype)
    device = runtime.configure(threads=threads)
    bed = make_testbed(testbed, torch_dtype, **(size or {}))
    limits = thresholds(torch_dtype)
    if sigma is not None:
        limits["sigma"] = sigma
    if steps < 1:
        raise DiagnoseError(f"--steps must be at least 1, got {steps}")
    before = torch.random.get_rng_state()
    run = run_triplet(bed, spec, lr, steps, limits["sigma"])
    global_rng_used = not torch.equal(before, torch.random.get_rng_state())
    name, evidence, sentence = verdict(run, limits)
    if name == "determinism failure" and global_rng_used:
        sentence += " (it drew from torch's global random generator)"
    return {
        "schema": SCHEMA, "optimizer": spec.source, "label": spec.label, "kind": spec.kind,
        "a_priori_equivariant": spec.equivariant, "options": dict(options or {}), "lr": lr,
        "steps": steps, "testbed": bed.describe(), "thresholds": limits,
        "verdict": name, "summary": sentence, "evidence": evidence,
        "global_rng_used": global_rng_used,
        "curve": {"step": run["step"], **run["drift"]},
        "loss": {"initial": run["loss_initial"], "final": run["loss_final"]},
        "environment": runtime.environment(dtype, device),
    }


def format_line(report: dict) -> str:
    """One printed line: optimizer, testbed, verdict, evidence."""
    return f"{report['optimizer']} on {report['testbed']['testbed']}: {report['verdict']} — {report['summary']}"


def bundle(source: str, reports: list[dict], provenance: dict) -> dict:
    """The JSON file of one diagnosis: the optimizer and one report per testbed."""
    return {"schema": SCHEMA, "optimizer": source_of(source), "reports": {r["testbed"]["testbed"]: r for r in reports},
            "provenance": provenance}


def provenance(source: str, testbeds: Sequence[str], *, steps: int = 100, lr: float | None = 1e-2,
               dtype: str = "float64", sigma: float | None = None, options: dict | None = None,
               sizes: dict | None = None, **_) -> dict:
    """A diagnosis's provenance (records.provenance): the optimizer and every setting of its runs
    (the defaults are :func:`diagnose`'s); the workflow computes the same to check a file it finds."""
    settings = {"testbeds": list(testbeds), "steps": steps, "lr": lr, "dtype": dtype, "sigma": sigma,
                "options": dict(options or {}), "sizes": {k: v for k, v in (sizes or {}).items() if k in testbeds}}
    return records.provenance({"optimizer": source_of(source)}, settings)


def read_bundle(path) -> dict:
    """A diagnosis file written by :func:`bundle` (records.load: schema and digest checked; a
    malformed one is a RecordError naming the file and the field)."""
    return records.load(path, SCHEMA)


# --- rendering: one figure per diagnosis, one table over many -----------------------------------

TWIN_STYLE = {  # colour, line style, marker: Figure 2's convention (gauge solid, noise dotted)
    "gauge": ("#D55E00", "-", "o"),
    "noise": ("#5A5A5A", ":", "s"),
    "identity": ("#0072B2", "--", "^"),
}
VERDICT_CLASS = {"equivariant": "exact", "basis-dependent": "differs", "chaotic": "within",
                 "determinism failure": "differs", "inconclusive": "within"}


def figure(report: dict):
    """Drift of the three twins against step + 1, log–log (as Figure 2), with the floor and σ.

    The identity twin is drawn only where it is non-zero (a bit-identical twin has no point on a
    log axis); a note says so.
    """
    from . import figures

    figures.house_style()
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.2, 2.7))
    x = [s + 1 for s in report["curve"]["step"]]
    limits = report["thresholds"]
    labels = {"gauge": "gauge twin", "noise": f"noise twin ($\\sigma$={limits['sigma']:.1e})",
              "identity": "$A{=}I$ twin"}
    low = limits["eps"] / 10
    for twin in ("gauge", "noise", "identity"):
        ys = [y if (math.isfinite(y) and y > 0) else math.nan for y in report["curve"][twin]]
        if all(math.isnan(y) for y in ys):
            continue
        colour, style, marker = TWIN_STYLE[twin]
        ax.plot(x, ys, ls=style, color=colour, lw=1.6, marker=marker, ms=2.6, mew=0, alpha=0.95,
                label=labels[twin], zorder=3)
    ax.axhline(limits["floor"], color=figures.FAINT, lw=0.9, dashes=(4, 3), zorder=2)
    ax.text(1.05, limits["floor"] * 1.6, f"round-off floor {limits['floor']:.1e}", fontsize=7.6,
            color=figures.MUTED, va="bottom")
    note = ("$A{=}I$ twin: bit-identical at every step" if report["evidence"].get("identity_first_difference") is None
            and report["verdict"] != "determinism failure" else "$A{=}I$ twin: NOT bit-identical")
    ax.text(1.02, 0.02, note, transform=ax.transAxes, ha="left", va="bottom", fontsize=7.6, color=figures.MUTED)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_ylim(low, 4)
    ax.set_xlim(0.9, x[-1] * 1.15)
    ax.set_xlabel("training step + 1")
    ax.set_ylabel(f"relative distance of {_OUTPUT_NAME.get(report['testbed']['testbed'], 'outputs')}")
    ax.set_title(f"{report['optimizer']} on {report['testbed']['testbed']} ({report['environment']['dtype']}): "
                 f"{report['verdict']}", fontsize=9.0)
    ax.grid(True, which="major")
    ax.legend(loc="upper left", bbox_to_anchor=(1.005, 1.02), frameon=False, fontsize=8.0)
    return fig


_OUTPUT_NAME = {"sensing": "$W=UV^\\top$", "attention": "validation logits"}


def summary_rows(bundles: list[dict]) -> list[dict]:
    """One flat row per (optimizer, testbed), in input order: the table's data."""
    rows = []
    for b in bundles:
        for name, r in sorted(b["reports"].items(), key=lambda item: TESTBEDS.index(item[0])):
            ev = {k: (math.nan if v is None and k != "identity_first_difference" else v)
                  for k, v in r["evidence"].items()}  # JSON null is a NaN
            ev.setdefault("noise_step1", math.nan)
            rows.append({
                "optimizer": r["optimizer"], "label": r["label"], "kind": r["kind"], "testbed": name,
                "dtype": r["environment"]["dtype"], "lr": r["lr"], "steps": r["steps"], "verdict": r["verdict"],
                "a_priori": {True: "equivariant", False: "basis-dependent", None: ""}[r["a_priori_equivariant"]],
                "gauge_step1": ev["gauge_step1"], "noise_step1": ev["noise_step1"], "gauge_max": ev["gauge_max"],
                "split_step": ev.get("split_step", math.nan), "ratio": ev.get("ratio", math.nan),
                "late_decades": ev.get("late_decades", math.nan), "floor": r["thresholds"]["floor"],
                "max_gauge_over_noise": ev.get("max_gauge_over_noise", math.nan),
                "identity_first_difference": ev.get("identity_first_difference"),
                "diverged_at": ev.get("diverged_at"), "base_moved": ev["base_moved"],
                "summary": r["summary"],
            })
    return rows


def agrees(row: dict) -> bool:
    """Whether a verdict is consistent with the engine's a-priori class: an equivariant rule may
    also come out chaotic (round-off amplified by the dynamics, not by the basis)."""
    if row["a_priori"] == "equivariant":
        return row["verdict"] in ("equivariant", "chaotic")
    return row["verdict"] == row["a_priori"]


def _evidence(row: dict) -> str:
    v = row["verdict"]
    if v == "equivariant":
        return f"max drift {row['gauge_max']:.1e} ≤ floor {row['floor']:.1e}"
    if v == "basis-dependent":
        return f"splits at step {int(row['split_step'])}, {row['ratio']:.0e}× noise twin"
    if v == "chaotic":
        return (f"leaves the floor at step {int(row['split_step'])}, ≤ {row['max_gauge_over_noise']:.1e}× "
                f"noise twin ({row['late_decades']:.2f} decades late)")
    if v == "determinism failure":
        return f"A=I twin differs from step {row['identity_first_difference']}"
    if row.get("diverged_at") is not None and not (isinstance(row["diverged_at"], float)
                                                   and math.isnan(row["diverged_at"])):
        return f"diverged at step {int(row['diverged_at'])}"
    if not math.isfinite(row["split_step"]):
        return f"base moved only {row['base_moved']:.1e}"
    return f"leaves the floor at step {int(row['split_step'])}, {row['ratio']:.1e}× noise twin"


def table_html(rows: list[dict]) -> str:
    """"Which optimizers respect the gauge": one row per (optimizer, testbed)."""
    from . import tables

    body = [[r["optimizer"], r["kind"], r["testbed"], f"{r['lr']:g}", r["verdict"], _evidence(r),
             f"{r['gauge_step1']:.1e}", f"{r['noise_step1']:.1e}", r["a_priori"] or "--"] for r in rows]
    counts = {v: sum(r["verdict"] == v for r in rows) for v in VERDICTS}
    disagree = [f"{r['optimizer']} ({r['testbed']})" for r in rows if r["a_priori"] and not agrees(r)]
    caption = (", ".join(f"{n} {v}" for v, n in counts.items() if n) + "; engine rules "
               + ("all agree with their a-priori class" if not disagree else f"disagreeing: {', '.join(disagree)}")
               + " (chaotic counts as equivariant: amplified round-off, not the basis)")
    return tables._html_table(["Optimizer", "Kind", "Testbed", "lr", "Verdict", "Evidence", "gauge drift (1)",
                               "noise drift (1)", "A-priori class"], body, caption,
                              [VERDICT_CLASS[r["verdict"]] for r in rows])


def table_latex(rows: list[dict]) -> str:
    from .tables import latex_text as tex

    lines = ["% Which optimizers respect the gauge (equivariance diagnostic), generated from the",
             "% workflow's diagnosis files. Do not edit.",
             "\\begin{tabular}{lllll}", "\\toprule",
             "Optimizer & Testbed & Verdict & Evidence & A-priori \\\\", "\\midrule"]
    for r in rows:
        lines.append(f"\\texttt{{{tex(r['optimizer'])}}} & {tex(r['testbed'])} & {tex(r['verdict'])} & "
                     f"{tex(_evidence(r))} & {tex(r['a_priori'] or '--')} \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def testbeds_of(choice: str) -> list[str]:
    """``sensing``, ``attention`` or ``both``."""
    if choice == "both":
        return list(TESTBEDS)
    if choice not in TESTBEDS:
        raise DiagnoseError(f"unknown testbed {choice!r}; use one of {', '.join(TESTBEDS)} or both")
    return [choice]


def run_all(source: str, testbeds: Sequence[str], **kw) -> dict:
    """Diagnose one optimizer on every testbed; the bundle of :func:`bundle`. A testbed that is
    not available fails before any training starts."""
    resolve(source, **(kw.get("options") or {}))  # bad input fails first, naming the optimizer
    for name in testbeds:
        if name not in TESTBEDS:
            raise DiagnoseError(f"unknown testbed {name!r}; use one of {', '.join(TESTBEDS)}")
        if name == "attention":
            make_testbed(name, torch.float64)
    stamp = provenance(source, testbeds, **kw)
    sizes = kw.pop("sizes", None) or {}
    return bundle(source, [diagnose(source, name, size=sizes.get(name), **kw) for name in testbeds], stamp)


def write(diagnosis: dict, json_path, figure_stem=None) -> list[str]:
    """Write the JSON report and, unless ``figure_stem`` is None, ``<stem>.<testbed>.pdf/.png``
    per testbed. Returns the paths written."""
    from pathlib import Path

    from . import figures

    records.write_json(json_path, diagnosis)
    written = [str(json_path)]
    if figure_stem is not None:
        for name, report in diagnosis["reports"].items():
            pdf, png = Path(f"{figure_stem}.{name}.pdf"), Path(f"{figure_stem}.{name}.png")
            pdf.parent.mkdir(parents=True, exist_ok=True)
            figures.save(figure(report), pdf, png)
            written += [str(pdf), str(png)]
    return written


def plan(settings: dict) -> dict[str, dict]:
    """The diagnoses a workflow config asks for (the ``diagnose`` block): label → source, lr,
    options, testbeds. The registry's rules first (when ``registry``), then ``optimizers`` in
    order; an optimizer whose ``settings`` exclude every configured testbed is left out."""
    sources = list(optim.REGISTRY) if settings.get("registry", True) else []
    sources += [s for s in settings.get("optimizers", []) if s not in sources]
    out: dict[str, dict] = {}
    for source in sources:
        label = label_of(source)
        if label in out:
            raise DiagnoseError(f"optimizers {out[label]['source']!r} and {source!r} share the label {label!r}")
        extra = settings.get("settings", {}).get(source, {})
        beds = [b for b in settings.get("testbeds", ["sensing"]) if b in extra.get("testbeds", TESTBEDS)]
        if beds:
            out[label] = {"source": source, "lr": float(extra.get("lr", settings["lr"])),
                          "options": dict(extra.get("options", {})), "testbeds": beds}
    return out
