"""Attention-head gauge twins (Section 6; spec: attention.md §1, §6–§10).

A pair is two copies of one initial model. Copy 2 is transformed before training, the two train
side by side on the same full batch, each with its own optimizer state, and their functions are
compared on the validation inputs at checkpoints:

- **gauge** twin: a random orthogonal A per (layer, head) on that head's W_Q/W_K row blocks, the
  same A for Q and K. The function is unchanged; only the basis of each head moves.
- **identity** twin: the same code path with A = I. Copy 2 must stay bit-identical to copy 1
  (drift exactly 0.0): the determinism control. The job fails otherwise, naming the pair.
- **noise** twin: i.i.d. Gaussian noise of scale σ on every entry of W_Q and W_K, same basis.

The pairs, twin constructions, metrics, identity check and record are the twin harness's
(:mod:`gaugelab.attention.harness`, shared with Table 9's float64 suite). This module holds what the CPU
set does its own way: the model and task settings, the update rules, and the loop. The two copies
advance as one batched program (a leading run dimension of 2; see :mod:`gaugelab.attention.transformer`).
Every operation acts on each run separately, so a copy's numbers are bit-identical to the same
copy trained alone (``tests/test_twins.py`` checks this).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import torch
from torch import Tensor

from . import harness, tasks, transformer
from .. import optim
from ..core import progress, records, runtime
from ..optim import cards
from .harness import STATUS_NONFINITE, STATUS_OK, accuracy, make_twin, qk_drift
from .pairs import Pair
from .configs import ModelConfig
from .transformer import Params
from .pairs import one_base
from . import configs

SCHEMA = records.TWIN_SCHEMA


# --- optimizers (§6) ----------------------------------------------------------------------------


def make_rule(optimizer: str, names: list[str], settings: dict) -> optim.Rule:
    """The pair's update rule, from the one definition in :mod:`gaugelab.optim`
    (``optim.attention_rule``): Adam; SGD = heavy-ball momentum (no dampening); scalar-Adam (one
    scalar over every parameter); Muon = the hybrid (NS5 on every W_Q, W_K, W_V, W_O, W_1, W_2;
    Adam at ``lr_aux`` on the rest). Only SGD and Muon read ``momentum``; only Muon ``lr_aux``."""
    return optim.attention_rule(optimizer, [transformer.is_matrix(n) for n in names],
                                settings.get("momentum"), settings.get("lr_aux"))


# --- the run (§6.1, §8, §9.7) -------------------------------------------------------------------


def model_config(settings: dict) -> ModelConfig:
    return configs.mod_config(settings["P"], settings["L"], settings["d"], settings["H"])


def checkpoints(settings: dict) -> list[int]:
    """The configured checkpoints up to the step budget, with step 0 and the last step."""
    return harness.checkpoints(settings["steps"], settings["checkpoints"])


def train(params: Params, cfg: ModelConfig, rule: optim.Rule, lr: float, x: Tensor, y: Tensor,
          steps: int) -> Iterator[int]:
    """The twin loop (§6.1): every run of ``params`` (copy 1, copy 2, …) trains on the same full
    batch with its own optimizer state, in place. Yields s after the s-th update of every run;
    stops early, before updating, when a loss is non-finite (the run's status is then nonfinite).

    One program advances all runs: the loss is the sum of the per-run mean losses, so each run's
    gradient is that of its own loss, and every operation acts on each run separately.
    """
    leaves = [p.requires_grad_(True) for p in params.values()]
    state = optim.init_runs(rule, leaves)
    for step in range(1, steps + 1):
        losses = transformer.loss(transformer.forward(params, x, cfg), y)  # (B,)
        if not bool(torch.isfinite(losses).all()):
            return
        state = optim.step_runs(leaves, losses, rule, state, lr, step)
        yield step


def train_pair(pair: Pair, settings: dict, *, threads: int | None = None, device: str = "cpu") -> dict:
    """Train one pair and return its run record (§10.5): :func:`train_base` of the pair alone."""
    return train_base([pair], settings, threads=threads, device=device)[0]


def train_base(pairs: list[Pair], settings: dict, *, threads: int | None = None, device: str = "cpu",
               log=None) -> list[dict]:
    """Train pairs that share copy 1 (one optimizer and init seed: :func:`base_of`) and return
    their run records (§10.5) in order. Copy 1 is trained once, beside copy 2 of every pair: one
    batched program of 1 + len(pairs) runs. Every operation acts on each run separately, so each
    record is the one its pair gets trained alone (``tests/test_twins.py`` checks it bit for bit).

    ``settings`` is the config's ``twins`` block (sizes, steps, checkpoints, learning rates). A
    pair stops where it would alone, before the update at which copy 1's or its copy 2's loss is
    non-finite (status nonfinite); its copy 2 then leaves the batch. Raises
    :class:`DeterminismError` if an identity twin is not bit-identical to its base at a checkpoint.
    ``log``, if given, is called with each finished pair and its record.
    """
    start = time.perf_counter()
    optimizer, init_seed = one_base(pairs)
    dev = runtime.configure(threads=threads, device=device)
    cfg = model_config(settings)
    split = tasks.modular_addition(cfg.vocab_out, settings["data_seed"], settings["train_fraction"])
    x_train, y_train, x_val, y_val = (t.to(dev) for t in (split.x_train, split.y_train, split.x_val, split.y_val))
    base = transformer.initial_params(cfg, init_seed)
    params = {k: v.to(dev) for k, v in transformer.stack([base] * (1 + len(pairs))).items()}  # copy 1, copy 2s
    for run, pair in enumerate(pairs, 1):
        make_twin(params, cfg, pair, run)
    rule, lr = make_rule(optimizer, list(params), settings), settings["lr"][optimizer]
    marks, steps = checkpoints(settings), settings["steps"]
    alive = list(range(len(pairs)))  # the pair of each copy 2 still in the batch: run 1 + position
    curves: list[list] = [[] for _ in pairs]
    z_last: list = [None] * len(pairs)  # (z copy 1, z copy 2) on the validation inputs at the last point
    out: list = [None] * len(pairs)

    @torch.no_grad()
    def evaluate(step: int, which: list[int]) -> None:
        z = transformer.forward(params, x_val, cfg)  # (1 + len(alive), N_val, P)
        for i in which:
            run = 1 + alive.index(i)
            point = harness.point(step, z[0], z[run], qk_drift(params, cfg, run))
            harness.check_identity(pairs[i], point, (p[0] for p in params.values()), (p[run] for p in params.values()))
            curves[i].append(point)
            z_last[i] = torch.stack([z[0], z[run]])  # (2, N_val, P): the pair's own batch

    @torch.no_grad()
    def finish(which: list[int], last: int) -> None:
        """The records of the pairs ``which``, whose runs end after update ``last``."""
        late = [i for i in which if curves[i][-1][0] != last]
        if late:
            evaluate(last, late)
        z_train = transformer.forward(params, x_train, cfg)
        for i in which:
            run = 1 + alive.index(i)
            z_val = z_last[i]
            val_losses, train_losses = transformer.loss(z_val, y_val), transformer.loss(z_train[[0, run]], y_train)
            ends = {"acc1": accuracy(z_val[0], y_val), "acc2": accuracy(z_val[1], y_val),
                    "val_loss1": float(val_losses[0]), "val_loss2": float(val_losses[1]),
                    "train_loss1": float(train_losses[0]), "train_loss2": float(train_losses[1])}
            # wall_s is the batch's time so far: the pairs of one base share their wall time
            out[i] = harness.record(
                pairs[i], cfg, task=f"mod{cfg.vocab_out}", steps=steps, steps_done=last, dtype=params["E"].dtype,
                device=dev, lr=lr, lr_aux=settings.get("lr_aux"), data_seed=settings["data_seed"], curve=curves[i],
                per_head=qk_drift(params, cfg, run), ends=ends,
                status=STATUS_OK if last == steps else STATUS_NONFINITE, start=start,
                provenance=provenance(pairs[i], settings))
            if log is not None:
                log(pairs[i], out[i])

    evaluate(0, alive)
    leaves = [p.requires_grad_(True) for p in params.values()]
    state = optim.init_runs(rule, leaves)
    last = 0
    shown = progress.Progress(f"twins {pairs[0].optimizer} init {pairs[0].init_seed}", len(pairs), steps)
    for step in range(1, steps + 1):
        losses = transformer.loss(transformer.forward(params, x_train, cfg), y_train)  # (1 + len(alive),)
        finite = torch.isfinite(losses).tolist()
        stopped = alive if not finite[0] else [i for i, ok in zip(alive, finite[1:]) if not ok]
        if stopped:
            finish(stopped, last)
            alive_runs = [0] + [1 + k for k, i in enumerate(alive) if i not in stopped]
            alive = [i for i in alive if i not in stopped]
            if not alive:
                break
            index = torch.tensor(alive_runs, device=dev)
            params = {k: v.detach()[index].requires_grad_(True) for k, v in params.items()}
            leaves, state = list(params.values()), optim.select_runs(state, index)
            losses = transformer.loss(transformer.forward(params, x_train, cfg), y_train)  # the same, per run
        state = optim.step_runs(leaves, losses, rule, state, lr, step)
        last = step
        shown.update(step, len(pairs) - len(alive))
        if step in marks:
            evaluate(step, alive)
    if alive:
        finish(alive, last)
    shown.finish(last)
    return out


NOT_RUN_SETTINGS = ("sets", "tau_decades")  # which pairs run, and the D.5 threshold: no run's numbers


def job_settings(block: dict) -> dict:
    """The settings of the ``twins`` block a twin job is given: every key but those that
    determine no run's numbers (:data:`NOT_RUN_SETTINGS`), so editing those reruns nothing. The
    rules pass these, and :func:`run_settings` narrows them to one optimizer's."""
    return {k: v for k, v in block.items() if k not in NOT_RUN_SETTINGS}


def run_settings(settings: dict, optimizer: str) -> dict:
    """Every setting of the ``twins`` block that determines one optimizer's pairs (the other
    optimizers' learning rates, the run sets and the D.5 threshold do not)."""
    out = {k: v for k, v in job_settings(settings).items() if k not in ("lr", "lr_aux")}
    out["lr"] = float(settings["lr"][optimizer])
    if cards.card(optimizer).lr_aux:
        out["lr_aux"] = float(settings["lr_aux"])
    return out


def provenance(pair: Pair, settings: dict) -> dict:
    """A pair record's provenance (records.provenance); the workflow computes the same to check a
    record it finds at the pair's path."""
    return harness.provenance(model_config(settings).name, pair, settings["steps"],
                              run_settings(settings, pair.optimizer))
