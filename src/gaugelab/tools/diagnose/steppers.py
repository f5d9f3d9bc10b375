"""Steppers: one optimizer driving one copy's parameters, whatever kind of optimizer it is."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Protocol

import torch
from torch import Tensor

from ... import optim


class Stepper(Protocol):
    """One copy's parameters and the optimizer that moves them, one step at a time."""

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
