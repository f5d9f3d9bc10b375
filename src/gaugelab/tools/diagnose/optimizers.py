"""Optimizers the diagnostic accepts, resolved to a way of building one stepper per copy.

:func:`resolve` accepts a name of the engine's registry (``adam``), or ``package.module:Attr``
where Attr is a :class:`torch.optim.Optimizer` subclass (constructed as ``Attr(params, lr=lr,
**options)``), a callable ``f(params, lr=..., **options)`` returning one, or a
:class:`gaugelab.optim.Rule` (or a callable that, called with ``**options`` only, returns one).
Engine rules run functionally with a leading run dimension of 1; torch optimizers run through
:class:`~.steppers.TorchStepper`, which hands ``step`` a closure (so LBFGS works too). Every copy
owns its optimizer, built from fresh parameters.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import Tensor

from ... import optim
from .errors import DiagnoseError
from .steppers import RuleStepper, Stepper, TorchStepper


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


def import_source(source: str):
    """The object ``package.module:Attr`` names (Attr may be dotted); a DiagnoseError naming what is missing."""
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
        obj = import_source(source)
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
