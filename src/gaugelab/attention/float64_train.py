"""The full-length loop of Table 9's float64 pairs (spec: attention.md §6.1, §8, §9.7).

A pair alone is trained as the spec's loop says: per step copy 1, then copy 2, each a model of its
own with its own optimizer state (:func:`train_pair`). The full-length jobs train many pairs as
**one batched program** (:func:`train_batch`): every copy 1 the pairs need (one per optimizer and
init seed, ``by_base``) once, beside copy 2 of each pair, every parameter with a leading
run dimension, so a step is one forward and backward of all of them; each copy 1's runs are
updated by their own rule (``float64.Copy``'s parts). From the first non-finite loss of any run
the batch goes on copy by copy, as the spec's loop does.

On the CPU each run's numbers are those of its copy trained alone, bit for bit, whatever else is
in the batch (``tests/test_suite64.py``). On a GPU cuBLAS picks its kernels by shape: a record
made in a batch differs from the same pair trained alone in the last bits (measured on an H200:
after 20 steps the drifts agree to about 1e-15, relative). A GPU record is its pair's in the batch
it was made in, and the workflow's job always trains a configuration's pairs in the same batches.

How many copies share a program is the device's (:func:`programs`): on a GPU a configuration's
pairs are one program (up to ``table9.max_copies`` copies: GPU memory), since a float64 step costs
about the same for 1 and 7 copies of the small models (kernel launches, not arithmetic, set its
time; docs/speed.md has the measurements); on the CPU one program per copy 1, where float64
batching gains nothing beyond the shared copy 1 and a larger batch only holds more activations.
"""

from __future__ import annotations

import math
import time

import torch

from . import harness, transformer
from .. import optim
from ..core import progress
from .harness import STATUS_NONFINITE, STATUS_OK
from .pairs import Pair, by_base
from .configs import STEPS, ModelConfig
from .float64 import (Copy, Task, checkpoints, clone, end_metrics, initial_params, learning_rate, logits,
                      mean_loss, measure, record)
from .transformer import Params


def train_pair(pair: Pair, cfg: ModelConfig, task: Task, settings: dict, *, steps: int | None = None,
               dtype: torch.dtype = torch.float64, device: torch.device | str = "cpu") -> dict:
    """Train one pair for ``steps`` (the configuration's budget by default) and return its record.
    Per step: copy 1, then copy 2, on the same batch tensors; evaluation after both. Stops with
    status ``nonfinite`` when copy 2's loss is not finite."""
    return train_copies(pair, cfg, task, settings, steps=steps, dtype=dtype, device=device)[0]


def train_copies(pair: Pair, cfg: ModelConfig, task: Task, settings: dict, *, steps: int | None = None,
                 dtype: torch.dtype = torch.float64, device: torch.device | str = "cpu") -> tuple[dict, Params, Params]:
    """:func:`train_pair`, also returning the final parameters of copy 1 and copy 2 (the merging
    extension's inputs)."""
    (rec,), copies = _train([pair], cfg, task, settings, steps, dtype, device, batched=False)
    return rec, clone(copies[0].params), clone(copies[1].params)


def train_batch(pairs: list[Pair], cfg: ModelConfig, task: Task, settings: dict, *, steps: int | None = None,
                dtype: torch.dtype = torch.float64, device: torch.device | str = "cpu", log=None) -> list[dict]:
    """:func:`train_pair` for distinct pairs, their records in order, as one batched program: each
    copy 1 once (per optimizer and init seed), beside copy 2 of every pair that shares it.
    ``log``, if given, is called with each finished pair and its record."""
    return _train(pairs, cfg, task, settings, steps, dtype, device, batched=True, log=log)[0]


def programs(pairs: list[Pair], device: torch.device | str, max_copies: int = 23) -> list[list[Pair]]:
    """The batches in which a device trains these pairs (see the module's docstring): on the CPU
    the pairs of each copy 1; on a GPU as many copy 1s with their twins as ``max_copies`` copies
    allow (the config's ``table9.max_copies``: GPU memory), in listed order; a copy 1 with more
    twins than that goes alone."""
    groups = list(by_base(pairs).values())
    if torch.device(device).type != "cuda":
        return groups
    copies = lambda batch: len(by_base(batch)) + len(batch)  # its copy 1s and twins
    out: list[list[Pair]] = []
    for group in groups:
        if out and copies(out[-1] + group) <= max_copies:
            out[-1] = out[-1] + group
        else:
            out.append(list(group))
    return out


def train_pairs(pairs: list[Pair], cfg: ModelConfig, task: Task, settings: dict, *, steps: int | None = None,
                dtype: torch.dtype = torch.float64, device: torch.device | str = "cpu", max_copies: int = 23,
                log=None) -> list[dict]:
    """A job's pairs, in the device's :func:`programs`, one after another; records in pair order."""
    done = {}
    for batch in programs(pairs, device, max_copies):
        done.update(zip(batch, train_batch(batch, cfg, task, settings, steps=steps, dtype=dtype, device=device,
                                           log=log)))
    return [done[p] for p in pairs]


def split_copies(batch: Copy, settings: dict) -> list[Copy]:
    """A batched Copy as one Copy per run, each with its part's rule, its own rows of the state and
    the same step counter: what the runs would be had they been trained one by one."""
    copies = []
    for part in batch.parts:
        for run in range(part.rows.start, part.rows.stop):
            index = torch.tensor([run], device=batch.params["E"].device)
            c = Copy({k: v.detach()[index] for k, v in batch.params.items()}, batch.cfg, part.optimizer, part.lr,
                     settings)
            c.parts[0].state = optim.select_runs(part.state, index - part.rows.start)
            c.t = batch.t
            copies.append(c)
    return copies


def _train(pairs: list[Pair], cfg: ModelConfig, task: Task, settings: dict, steps: int | None, dtype: torch.dtype,
           device: torch.device | str, *, batched: bool, log=None) -> tuple[list[dict], list[Copy] | None]:
    """The loop of distinct pairs: their records, and the runs (each copy 1 followed by its pairs'
    copy 2s) if the loop went copy by copy. ``batched``: every run as one program while every loss
    is finite; from the first non-finite loss of any run (or from the start, if not ``batched``)
    one Copy per run, stepped as the spec's loop says (per copy 1: it, then each of its copy 2s; a
    pair ends at its copy 2's non-finite loss)."""
    start = time.perf_counter()
    if not pairs or len(set(pairs)) != len(pairs):
        raise ValueError(f"a batch is distinct pairs: {[str(p) for p in pairs]}")
    steps = STEPS[cfg.name] if steps is None else steps
    groups = by_base(pairs)  # (optimizer, init seed) -> its pairs: one copy 1 each
    bases = {init: initial_params(cfg, init, dtype, device) for _, init in groups}
    runs, parts, rows = [], [], {}  # each run's parameters; (optimizer, lr, runs) per copy 1; pair -> rows
    for (optimizer, init), group in groups.items():
        first = len(runs)
        runs.append(clone(bases[init]))
        for pair in group:
            rows[pair] = (first, len(runs))
            runs.append(harness.twin_of(bases[init], cfg, pair))
        parts.append((optimizer, learning_rate(settings, cfg, optimizer), 1 + len(group)))
    c1, c2 = [rows[p][0] for p in pairs], [rows[p][1] for p in pairs]
    batch, copies = None, None
    if batched:
        batch = Copy({k: torch.cat([r[k] for r in runs]) for k in runs[0]}, cfg, settings=settings, parts=parts)
        runs.clear()  # the batch holds its own copy (on a GPU, a configuration's 23 copies: about 1 GB)
    else:
        rules = [(optimizer, lr) for optimizer, lr, n in parts for _ in range(n)]  # runs lie part by part
        copies = [Copy(r, cfg, optimizer, lr, settings) for r, (optimizer, lr) in zip(runs, rules)]
    marks, curves, out = set(checkpoints(steps)), [[] for _ in pairs], [None] * len(pairs)
    alive, done, last = list(range(len(pairs))), [0] * len(pairs), [(None, None)] * len(pairs)
    z: list = [None] * len(pairs)  # each pair's (copy 1, copy 2) logits on the validation inputs at its last point

    def params(run: int) -> Params:
        """Run ``run``'s parameters, a run dimension of 1 (of the batch: a view)."""
        return {k: v[run : run + 1] for k, v in batch.params.items()} if copies is None else copies[run].params

    @torch.no_grad()
    def evaluate(step: int, which: list[int]) -> None:
        if copies is None:
            zs = transformer.forward(batch.params, task.x_val, cfg)  # (runs, N_val, ...)
        else:
            zs = {r: copies[r].logits(task.x_val) for r in dict.fromkeys(r for i in which for r in (c1[i], c2[i]))}
        for i in which:
            z[i] = (zs[c1[i]], zs[c2[i]])
            curves[i].append(measure(pairs[i], cfg, step, *z[i], params(c1[i]), params(c2[i])))

    def finish(i: int, status: str) -> None:
        if curves[i][-1][0] != done[i]:
            evaluate(done[i], [i])
        ends = end_metrics(task, *z[i])
        if task.kind == "mod":
            ends.update(train_loss1=mean_loss(logits(params(c1[i]), cfg, task.x_train), task.y_train),
                        train_loss2=mean_loss(logits(params(c2[i]), cfg, task.x_train), task.y_train))
        else:
            ends.update(last_batch_loss1=last[i][0], last_batch_loss2=last[i][1])
        out[i] = record(cfg, pairs[i], settings, steps=steps, steps_done=done[i], curve=curves[i],
                        per_head=harness.qk_drift_between(params(c1[i]), params(c2[i]), cfg), ends=ends,
                        status=status, start=start, dtype=dtype, device=device)
        if log is not None:
            log(pairs[i], out[i])

    evaluate(0, alive)
    shown = progress.Progress(f"{cfg.name} " + ", ".join(f"{o} init {s}" for o, s in groups), len(pairs), steps)
    for step in range(1, steps + 1):
        x, y = task.batch(step)
        losses = batch.try_step(x, y) if copies is None else None
        if losses is None:  # per copy, as train_pair: each copy 1, then its copy 2s
            if copies is None:
                copies = split_copies(batch, settings)
            losses = [math.nan] * len(copies)
            for first in dict.fromkeys(c1[i] for i in alive):
                losses[first] = copies[first].step(x, y)
                for i in alive:
                    if c1[i] == first:
                        losses[c2[i]] = copies[c2[i]].step(x, y)
        for i in list(alive):
            last[i] = (losses[c1[i]], losses[c2[i]])
            if not math.isfinite(losses[c2[i]]):  # copy 2's loss (§6.1)
                alive.remove(i)
                finish(i, STATUS_NONFINITE)
            else:
                done[i] = step
        if not alive:
            break
        shown.update(step, len(pairs) - len(alive))
        if step in marks:
            evaluate(step, alive)
    for i in alive:
        finish(i, STATUS_OK)
    shown.finish(step)
    return out, copies
