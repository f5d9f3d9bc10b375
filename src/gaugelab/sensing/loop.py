"""The run loops of sensing.md §2 (the canonical loop, the dial loop, the GPU loop) over a batch
of runs on the testbed (:mod:`.testbed`).

A batch is any set of runs that share the product with the measurement matrices: runs of several
methods, learning rates, seeds (one instance each) and relative perturbations of the initial
factors. They advance as one tensor program; a run that stops (interpolated or diverged) leaves
the batch, so the others keep their exact step semantics.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from .. import optim
from .testbed import Instance, Layout, loss, loss_and_gradients, metrics

STATUS_INTERPOLATED, STATUS_BUDGET, STATUS_DIVERGED = "interpolated", "budget", "diverged"
DIVERGENCE_BOUND = 1e8
DIAL_DIVERGENCE_BOUND = 1e6
LOOPS = ("canonical", "dial", "gpu")  # gpu: canonical, but a diverged run keeps its train (§2.2)


@dataclass
class RunResult:
    lr: float
    perturbation: float
    status: str
    steps: int
    train: float
    rec: float
    erank: float
    nuc: float
    bal: float
    curve_steps: list[int]
    curve_loss: list[float]
    prefix: RunResult | None = None  # the result of the shorter run that is this run's first steps


def prefix_problem(short: int, budget: int, decayed: bool, check_every: int, early_stop: bool,
                   loop: str) -> str | None:
    """Why the run of budget ``short`` with early stop is not the first steps of a run of budget
    ``budget``; None when it is.

    It is when nothing of a step depends on the budget before ``short``: a run at a constant lr
    (any shorter budget), or a decayed one (its lr depends on the budget) at the same budget when
    it itself runs without early stop (the decay-full mode). ``short`` is a multiple of the check
    interval, where the shorter run's last check falls. No run of the dial loop is one: its checks
    evaluate the post-update loss."""
    if loop == "dial":
        return "the dial loop's checks evaluate the post-update loss: no run of it is a prefix"
    if not 0 < short <= budget or (short == budget and early_stop):
        return (f"a prefix of budget {short} is not a shorter run of one of budget {budget}"
                f"{' with early stop' if early_stop else ''}")
    if decayed and short != budget:
        return f"a decayed run's lr depends on its budget: no run of budget {short} is its prefix"
    if short % check_every:
        return f"a prefix's budget {short} is not a multiple of the check interval {check_every}"
    return None


def check_prefixes(prefixes: list[int | None], budget: int, decayed: list[bool], check_every: int,
                   early_stop: list[bool], loop: str) -> dict[int, int]:
    """Each run's shorter budget T' (by run) whose early-stopped run is the run's first steps;
    a ValueError naming the first that is not (:func:`prefix_problem`)."""
    out = {}
    for run, short in enumerate(prefixes):
        if short is None:
            continue
        problem = prefix_problem(short, budget, decayed[run], check_every, early_stop[run], loop)
        if problem:
            raise ValueError(problem)
        out[run] = short
    return out


def cosine_factor(t: int, budget: int) -> float:
    """½(1 + cos(π t / T)), horizon = the budget, η_T = 0."""
    return 0.5 * (1.0 + math.cos(math.pi * t / budget))


def linear_factor(t: int, budget: int) -> float:
    """1 − t/T (the signum audit's "lin" anneal, spec §12), η_T = 0."""
    return 1.0 - t / budget


ANNEALS = {"cosine": cosine_factor, "linear": linear_factor}  # the shape of a decayed run's lr


class _Group:
    """The runs of a batch that share one update rule: their rows (one contiguous slice of the
    batch), learning rates and the rule's state. A stackable rule (optim.Rule.stackable) gets
    each run's U and V as one (b, 2, n, k) tensor, which halves its operations without changing
    its arithmetic; the others get them one by one, V's gradient in autograd's transposed layout."""

    def __init__(self, rule: optim.Rule, rows: slice, factors: Tensor, base_lr: Tensor, decayed: Tensor):
        self.rule, self.rows = rule, rows
        self._set_runs(base_lr, decayed)
        self.state = rule.init(self._params(factors))

    def _set_runs(self, base_lr: Tensor, decayed: Tensor) -> None:
        self.base_lr, self.decayed = base_lr, decayed
        # decided once here, not tested at every step
        self.schedule = "cosine" if decayed.all() else "const" if not decayed.any() else "mixed"

    def __len__(self) -> int:
        return len(self.base_lr)

    def _params(self, x: Tensor) -> list[Tensor]:
        x = x[self.rows]
        return [x] if self.rule.stackable else [x[:, 0], x[:, 1]]

    def _grads(self, grads: tuple[Tensor, Tensor, Tensor]) -> list[Tensor]:
        stacked, grad_u, grad_v = grads
        return [stacked[self.rows]] if self.rule.stackable else [grad_u[self.rows], grad_v[self.rows]]

    def _lr(self, factor: float) -> Tensor:
        if self.schedule == "const":
            return self.base_lr
        if self.schedule == "cosine":
            return self.base_lr * factor
        return torch.where(self.decayed, self.base_lr * factor, self.base_lr)

    def step(self, factors: Tensor, grads: tuple[Tensor, Tensor, Tensor], factor: float, t: int) -> None:
        """One update of the group's runs, added to ``factors`` in place. ``grads``: the stacked
        gradient (B, 2, n, k), and U's and V's as they come."""
        deltas, self.state = self.rule.update(self._grads(grads), self.state, self._lr(factor), t)
        for param, delta in zip(self._params(factors), deltas):
            param.add_(delta)

    def keep(self, mask: Tensor) -> None:
        """Drop the runs that left the batch (``mask``: which of the group's runs stay)."""
        if not mask.all():
            self.state = optim.select_runs(self.state, mask.nonzero().flatten())
            self._set_runs(self.base_lr[mask], self.decayed[mask])


def train(inst: Instance, rule: optim.Rule | list[optim.Rule], lrs: list[float], u0: Tensor, v0: Tensor, *,
          budget: int, decayed: bool | list[bool], tol: float = 1e-7, check_every: int = 200,
          perturbations: list[float] | None = None, which: list[int] | None = None,
          loop: str = "canonical", early_stop: bool | list[bool] = True, anneal: str = "cosine", progress=None,
          observe=None, observe_every: int = 0, prefixes: list[int | None] | None = None) -> list[RunResult]:
    """Run the canonical loop (spec §2.1), the dial loop or the GPU loop (§2.2) for every run at once.

    The dial loop has no per-step divergence test: at each check it evaluates the post-update
    loss, stops a run as diverged above 1e6 (or non-finite) and as interpolated below ``tol``;
    at the budget the post-update loss decides the status and is the reported train loss.
    ``early_stop=False`` is the no-early-stop variant (§2.2, decay-full mode): every run executes
    all ``budget`` steps, and ``tol`` still decides its status at the end. It is shared or given
    per run, like ``rule`` and ``decayed``.

    ``rule`` and ``decayed`` are shared or given per run: runs of several methods share the
    product with A (the cost that dominates), each method updating its own runs. ``inst`` is one
    instance or a stack (one per seed); ``which`` gives each run's instance (default: the first).
    ``u0``, ``v0`` are shared (n, k) factors or one per run (B, n, k). ``perturbations`` (default
    0) scale each run's U0 by (1 + δ): the sensitivity reruns. Returns one result per run, in
    input order; each run's numbers are independent of the batch it ran in. ``progress`` (a
    :class:`gaugelab.core.progress.Progress`) hears of every step; it reads only the clock.
    ``anneal`` is the decayed runs' shape (:data:`ANNEALS`). ``observe(t, factors, runs, states)``,
    if given, sees every ``observe_every``-th step after its update: the batch's (B, 2, n, k)
    factors, the run of each row and each rule group's state (the signum audit's diagnostics); it
    must not change them. ``prefixes`` (one per run, or None) gives runs a shorter budget T'
    (:func:`check_prefixes`): the run of budget T' with early stop is its first steps, and its
    result is the run's ``prefix``, as that run alone would give it.
    """
    if loop not in LOOPS:
        raise ValueError(f"unknown loop {loop!r}; use one of {LOOPS}")
    if anneal not in ANNEALS:
        raise ValueError(f"unknown anneal {anneal!r}; use one of {tuple(ANNEALS)}")
    anneal_factor = ANNEALS[anneal]
    dial = loop == "dial"
    inst = inst.stacked()
    count = len(lrs)
    rules = rule if isinstance(rule, list) else [rule] * count
    decays = decayed if isinstance(decayed, list) else [decayed] * count
    stops = early_stop if isinstance(early_stop, list) else [early_stop] * count
    deltas = list(perturbations) if perturbations is not None else [0.0] * count
    if not len(rules) == len(decays) == len(stops) == len(deltas) == count:
        raise ValueError("rule, decayed, early_stop and perturbations need one entry per run")
    u0 = u0.expand(count, *u0.shape[-2:])
    v0 = v0.expand(count, *v0.shape[-2:])
    # The batch's rows hold the runs group by group, so each group is one slice of the batch.
    distinct = list({id(r): r for r in rules}.values())
    members = [[run for run in range(count) if rules[run] is r] for r in distinct]
    order = [run for runs in members for run in runs]
    factors = torch.stack([torch.stack([u0[run] * (1.0 + deltas[run]) if deltas[run] else u0[run], v0[run]])
                           for run in order])  # (B, 2, n, k): U and V of each run
    groups, start = [], 0
    for r, runs in zip(distinct, members):
        rows = slice(start, start + len(runs))
        groups.append(_Group(r, rows, factors, torch.tensor([float(lrs[i]) for i in runs], dtype=torch.float64),
                             torch.tensor([bool(decays[i]) for i in runs])))
        start += len(runs)
    run_instance = torch.tensor(which if which is not None else [0] * count, dtype=torch.long)
    active = torch.tensor(order)  # original run id of each row of the batch
    active_ids = order
    layout = Layout.of(run_instance[active], inst.A.shape[0])
    curves: list[list[float]] = [[] for _ in range(count)]
    curve_steps: list[int] = []
    results: dict[int, RunResult] = {}
    pending = check_prefixes(prefixes or [None] * count, budget, decays, check_every, stops, loop)
    stopping = torch.tensor(stops)  # by original run id: whether the run stops early
    any_stopping = any(stops)
    shorter: dict[int, RunResult] = {}

    def retire(rows: Tensor, t: int, train_loss: Tensor, status: str, into: dict[int, RunResult] = results) -> None:
        if status == STATUS_DIVERGED:
            values = {key: [math.nan] * len(rows) for key in ("rec", "erank", "nuc", "bal")}
            final_train = train_loss[rows].tolist() if loop == "gpu" else [math.nan] * len(rows)
        else:
            # one run at a time: log/exp round by position in a vectorised kernel (see matrix_power)
            per_run = [metrics(inst.X[run_instance[active_ids[r]]], factors[r : r + 1, 0], factors[r : r + 1, 1])
                       for r in rows.tolist()]
            values = {key: [m[key].item() for m in per_run] for key in per_run[0]}
            final_train = train_loss[rows].tolist()
        for j, row in enumerate(rows.tolist()):
            run = active_ids[row]
            into[run] = RunResult(
                lr=lrs[run], perturbation=deltas[run], status=status, steps=t,
                train=final_train[j], rec=values["rec"][j], erank=values["erank"][j],
                nuc=values["nuc"][j], bal=values["bal"][j],
                curve_steps=curve_steps[: len(curves[run])], curve_loss=list(curves[run]))

    def end_prefixes(t: int, check_loss: Tensor, diverged: Tensor | None) -> None:
        """The shorter runs that end at step t: diverged, interpolated at a check, or at their budget."""
        ending: dict[str, list[int]] = {}
        below = (check_loss < tol).tolist()
        for row, run in enumerate(active_ids):
            if run not in pending:
                continue
            if diverged is not None and bool(diverged[row]):
                ending.setdefault(STATUS_DIVERGED, []).append(row)
            elif t % check_every == 0 and below[row]:
                ending.setdefault(STATUS_INTERPOLATED, []).append(row)
            elif t == pending[run]:
                ending.setdefault(STATUS_BUDGET, []).append(row)
        for status, rows in ending.items():
            retire(torch.tensor(rows), t, check_loss, status, into=shorter)
            for row in rows:
                del pending[active_ids[row]]

    no_divergence = torch.zeros(count, dtype=torch.bool)
    for t in range(1, budget + 1):
        if progress is not None:
            progress.update(t - 1, count - len(active_ids))
        train_loss, grad_u, grad_v = loss_and_gradients(inst, factors[:, 0], factors[:, 1], layout)
        grads = (torch.stack([grad_u, grad_v], dim=1), grad_u, grad_v)
        if t == 1 or t % check_every == 0 or t == budget:
            curve_steps.append(t)
            for run, value in zip(active_ids, train_loss.tolist()):
                curves[run].append(value)
        factor = anneal_factor(t, budget)
        for group in groups:
            group.step(factors, grads, factor, t)
        if observe is not None and t % observe_every == 0:
            observe(t, factors, active_ids, [(group.rows, group.state) for group in groups])
        diverged = None  # (None: no run diverged)
        if not dial:
            check_loss = train_loss
            if not bool((check_loss <= DIVERGENCE_BOUND).all()):  # one test settles the common case
                diverged = ~torch.isfinite(check_loss) | (check_loss > DIVERGENCE_BOUND)
        elif t % check_every == 0 or t == budget:
            check_loss = loss(inst, factors[:, 0], factors[:, 1], layout)  # post-update
            diverged = ~torch.isfinite(check_loss) | (check_loss > DIAL_DIVERGENCE_BOUND)
        checking = any_stopping and t % check_every == 0
        if pending and (diverged is not None or t % check_every == 0):
            end_prefixes(t, check_loss, diverged)
        if diverged is None:
            if not checking:
                continue
            diverged = no_divergence[: len(active_ids)]
        done = diverged.clone()
        if diverged.any():
            retire(diverged.nonzero().flatten(), t, check_loss, STATUS_DIVERGED)
        if checking:
            converged = ~diverged & (check_loss < tol) & stopping[active]
            if converged.any():
                retire(converged.nonzero().flatten(), t, check_loss, STATUS_INTERPOLATED)
                done |= converged
        if done.any():
            keep = (~done).nonzero().flatten()
            if len(keep) == 0:
                break
            factors, active, check_loss = factors[keep], active[keep], check_loss[keep]
            active_ids = active.tolist()
            start = 0
            for group in groups:
                group.keep(~done[group.rows])
                group.rows = slice(start, start + len(group))
                start += len(group)
            groups = [g for g in groups if len(g)]
            layout = Layout.of(run_instance[active], inst.A.shape[0])
    else:
        rows = torch.arange(len(active_ids))
        interpolated = check_loss < tol
        for status, mask in ((STATUS_INTERPOLATED, interpolated), (STATUS_BUDGET, ~interpolated)):
            if mask.any():
                retire(rows[mask], budget, check_loss, status)
    if progress is not None:
        progress.finish(t)
    for run, result in shorter.items():
        results[run].prefix = result
    return [results[i] for i in range(count)]
