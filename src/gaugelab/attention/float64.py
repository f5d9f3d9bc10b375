"""The float64 twin suite of Table 9 (spec: attention.md §2, §4, §5, §7–§10.4, §12.3).

The twin protocol of Section 6 repeated in float64 with deterministic kernels, at larger sizes
and on a character-level language model. The architecture is :mod:`gaugelab.attention.transformer`'s; this
suite differs in

- its **initialisation**: a dedicated CPU generator seeded with the init seed, drawn in float32
  grouped by parameter type across layers (E, pos, every W_Q, every W_K, every W_V, every W_O,
  gains, every W_1, every W_2, g_f, head), then cast to the model dtype (§4);
- its **embedding** (one-hot matmul), **loss** (written-out cross-entropy) and, on text, a causal
  mask with every position read out: the ``ModelConfig`` fields ``embed``, ``causal``, ``readout``;
- the **dtype** of the twin draws: gauge and noise draws follow the model dtype (float64 here).

The pairs, twins, metrics, identity check and record are the twin harness's
(:mod:`gaugelab.attention.harness`), the update rules :mod:`gaugelab.attention.twins`'s. This module holds the model
variant, the task, :class:`Copy` (runs of the model as one program, each block of runs under its
own rule) and the records; the full-length loop, alone or batched, is
:mod:`gaugelab.attention.float64_train`, and the **step-1 subset** (steps 0 and 1 of every pair, the default
target's Table 9) :mod:`gaugelab.attention.float64_step1`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor

from . import corpus, harness, tasks, transformer, twins
from .. import optim
from ..core import records, runtime
from ..optim import cards
from .pairs import Pair
from .configs import CHECKPOINTS, LABELS, ModelConfig, config
from .transformer import Params

DATA_SEED = 42


def is_text(cfg: ModelConfig) -> bool:
    return cfg.readout == "all"


def task_kind(cfg: ModelConfig) -> str:
    return "text" if is_text(cfg) else "mod"


# --- initialisation (§4) ------------------------------------------------------------------------


def param_names(cfg: ModelConfig) -> list[str]:
    """The float64 model's parameter order (§4): grouped by type across layers. Used by the
    optimizer loop and the scalar-Adam sum."""
    grouped = [f"l{i}.{name}" for name in ("W_Q", "W_K", "W_V", "W_O", "g1", "g2", "W_1", "W_2")
               for i in range(cfg.n_layer)]
    return ["E", "pos", *grouped, "g_f", "W_out"]


def initial_params(cfg: ModelConfig, init_seed: int, dtype: torch.dtype = torch.float64,
                   device: torch.device | str = "cpu") -> Params:
    """The §4 draw: a fresh CPU generator seeded ``init_seed``; float32 values, transformed in
    float32, cast to ``dtype``, moved to ``device``. Uniform draws are (rand·2 − 1)/√fan_in.
    Returned in :func:`param_names` order, each with a leading run dimension of 1."""
    gen = torch.Generator().manual_seed(init_seed)
    d, L = cfg.d, cfg.n_layer

    def uniform(out: int, fan_in: int) -> Tensor:
        return (torch.rand(out, fan_in, generator=gen) * 2 - 1) / fan_in**0.5

    p: Params = {"E": torch.randn(cfg.vocab_in, d, generator=gen),
                 "pos": torch.randn(1, cfg.n_ctx, d, generator=gen) * 0.02}
    for name in ("W_Q", "W_K", "W_V", "W_O"):
        for i in range(L):
            p[f"l{i}.{name}"] = uniform(d, d)
    for name in ("g1", "g2"):
        for i in range(L):
            p[f"l{i}.{name}"] = torch.ones(d)
    for i in range(L):
        p[f"l{i}.W_1"] = uniform(cfg.mlp, d)
    for i in range(L):
        p[f"l{i}.W_2"] = uniform(d, cfg.mlp)
    p["g_f"] = torch.ones(d)
    p["W_out"] = uniform(cfg.vocab_out, d)
    assert list(p) == param_names(cfg)
    return {k: v.to(dtype).to(device)[None].contiguous() for k, v in p.items()}


# --- data (§5) ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    """What a pair trains and is measured on: the batch of each 1-based step (the same tensors
    for both copies), the validation inputs, and the full training set (mod) for the train loss."""

    kind: str                     # "mod" or "text"
    x_val: Tensor
    y_val: Tensor
    x_train: Tensor | None = None  # mod: the full batch of every step
    y_train: Tensor | None = None
    chars: corpus.CharData | None = None
    device: torch.device | str = "cpu"

    def batch(self, step: int) -> tuple[Tensor, Tensor]:
        if self.chars is None:
            return self.x_train, self.y_train
        x, y = self.chars.batch(step)  # row step − 1 of the shared (3000 × 32) table
        return x.to(self.device), y.to(self.device)


def make_task(cfg: ModelConfig, corpus_path: str | Path | None = None, device: torch.device | str = "cpu") -> Task:
    if is_text(cfg):
        if corpus_path is None:
            raise ValueError(f"{cfg.name} needs the tiny-Shakespeare corpus (corpus_path)")
        chars = corpus.load(corpus_path)
        if len(chars.vocab) != cfg.vocab_in:
            raise ValueError(f"corpus vocabulary has {len(chars.vocab)} characters, {cfg.name} expects {cfg.vocab_in}")
        x_val, y_val = chars.validation()
        return Task("text", x_val.to(device), y_val.to(device), chars=chars, device=device)
    split = tasks.modular_addition(cfg.vocab_out, DATA_SEED, tasks.TRAIN_FRACTION)
    return Task("mod", split.x_val.to(device), split.y_val.to(device), split.x_train.to(device),
                split.y_train.to(device), device=device)


# --- one copy -----------------------------------------------------------------------------------


@dataclass
class Part:
    """Consecutive runs of a :class:`Copy` that one optimizer trains (the runs of one copy 1): its
    rows, rule, learning rate and state (every buffer with the run dimension)."""

    rows: slice
    optimizer: str
    rule: optim.Rule
    lr: float
    state: dict


class Copy:
    """Runs of the float64 model as one program: their parameters (leading run dimension), one
    step counter (§6.1), and the parts that update them. One copy of a pair is a Copy of one run
    under ``optimizer`` at ``lr``; a batch of several copy 1s and their twins gives ``parts``
    instead, (optimizer, lr, run count) per block of consecutive rows."""

    def __init__(self, params: Params, cfg: ModelConfig, optimizer: str | None = None, lr: float | None = None,
                 settings: dict | None = None, *, parts: list[tuple[str, float, int]] | None = None):
        self.params, self.cfg = params, cfg
        self.names = list(params)
        self.leaves = [params[n].requires_grad_(True) for n in self.names]
        self.parts, row = [], 0
        for name, rate, runs in parts or [(optimizer, lr, self.leaves[0].shape[0])]:
            rule, rows = twins.make_rule(name, self.names, settings), slice(row, row + runs)
            state = optim.init_runs(rule, [p.detach()[rows] for p in self.leaves])
            self.parts.append(Part(rows, name, rule, rate, state))
            row += runs
        self.t = 0

    def step(self, x: Tensor, y: Tensor) -> float:
        """Forward, hand-written loss, backward, update; returns the pre-update loss. A
        non-finite loss leaves the copy untouched."""
        loss = transformer.manual_loss(transformer.forward(self.params, x, self.cfg), y)  # (1,)
        if torch.isfinite(loss).all():
            self._update(loss)
        return float(loss.detach()[0])

    def logits(self, x: Tensor) -> Tensor:
        return logits(self.params, self.cfg, x)

    def try_step(self, x: Tensor, y: Tensor) -> list[float] | None:
        """:meth:`step` of every run at once, if every run's loss is finite (the pre-update losses);
        otherwise None, and no run moves."""
        loss = transformer.manual_loss(transformer.forward(self.params, x, self.cfg), y)  # (B,)
        if not torch.isfinite(loss).all():
            return None
        values = loss.detach().tolist()
        self._update(loss)
        return values

    def _update(self, loss: Tensor) -> None:
        """One optimizer step of every run from its loss (the runs' losses summed: each run's
        gradient is its own), each part by its rule."""
        self.t += 1
        grads = torch.autograd.grad(loss.sum(), self.leaves)
        for part in self.parts:
            leaves, part_grads = [p.detach()[part.rows] for p in self.leaves], [g[part.rows] for g in grads]
            part.state = optim.update_runs(leaves, part_grads, part.rule, part.state, part.lr, self.t)


@torch.no_grad()
def logits(params: Params, cfg: ModelConfig, x: Tensor) -> Tensor:
    return transformer.forward(params, x, cfg)[0]


def clone(params: Params) -> Params:
    return {k: v.detach().clone() for k, v in params.items()}


def mean_loss(z: Tensor, y: Tensor) -> float:
    return float(transformer.manual_loss(z[None], y)[0])


def learning_rate(settings: dict, cfg: ModelConfig, optimizer: str) -> float:
    return float(settings["lr"][task_kind(cfg)][optimizer])


# The end-of-run fields of a float64 record (§9.3), in record order: accuracies for mod, the
# full-train loss for a full mod run, the last minibatch losses for text; None where not measured.
END_FIELDS = ("acc1", "acc2", "val_loss1", "val_loss2", "train_loss1", "train_loss2", "last_batch_loss1",
              "last_batch_loss2")


def record(cfg: ModelConfig, pair: Pair, settings: dict, *, steps: int, steps_done: int, curve: list,
           per_head: list, ends: dict, status: str, start: float, dtype: torch.dtype, device) -> dict:
    """A run record (harness.record), with this suite's fields ``label`` and, on text, the last
    minibatch losses."""
    return harness.record(
        pair, cfg, task="text" if is_text(cfg) else f"mod{cfg.vocab_out}", label=LABELS[cfg.name], steps=steps,
        steps_done=steps_done, dtype=dtype, device=device, lr=learning_rate(settings, cfg, pair.optimizer),
        lr_aux=settings.get("lr_aux"), data_seed=DATA_SEED, curve=curve, per_head=per_head,
        ends={k: ends.get(k) for k in END_FIELDS}, status=status, start=start,
        provenance=provenance(cfg.name, pair, settings, steps))


RUN_SETTINGS = ("dtype", "momentum", "lr", "lr_aux")  # the table9 block's keys a run's numbers depend on


def job_settings(block: dict) -> dict:
    """The settings of the ``table9`` block a Table 9 job is given (:data:`RUN_SETTINGS`): the
    lists of configurations and pairs, the device and the merge block determine no run's numbers.
    The rules pass these, and :func:`run_settings` narrows them to one optimizer's."""
    return {k: block[k] for k in RUN_SETTINGS}


def run_settings(model: str, settings: dict, optimizer: str) -> dict:
    """Every setting of the ``table9`` block that determines one optimizer's pairs of one
    configuration (the other learning rates, the lists of configurations and pairs, the device
    and the merge block do not)."""
    out = {"dtype": settings["dtype"], "momentum": settings["momentum"],
           "lr": learning_rate(settings, config(model), optimizer)}
    if cards.card(optimizer).lr_aux:
        out["lr_aux"] = float(settings["lr_aux"])
    return out


def provenance(model: str, pair: Pair, settings: dict, steps: int) -> dict:
    """A float64 pair record's provenance (records.provenance); the workflow computes the same to
    check a record it finds: a step-1 record is never taken for a full-length one."""
    return harness.provenance(model, pair, steps, run_settings(model, settings, pair.optimizer))


def step1_provenance(model: str, settings: dict, pairs: list[Pair]) -> dict:
    """A step-1 bundle's provenance: its configuration and the pairs it holds."""
    listed = [[p.optimizer, p.twin, p.init_seed, p.twin_seed, float(p.sigma)] for p in pairs]
    return records.provenance({"config": model, "steps": 1},
                              {"pairs": listed, **{p.optimizer: run_settings(model, settings, p.optimizer)
                                                   for p in pairs}})


def end_metrics(task: Task, z1: Tensor, z2: Tensor) -> dict:
    ends = {"val_loss1": mean_loss(z1, task.y_val), "val_loss2": mean_loss(z2, task.y_val)}
    if task.kind == "mod":
        ends.update(acc1=harness.accuracy(z1, task.y_val), acc2=harness.accuracy(z2, task.y_val))
    return ends


def measure(pair: Pair, cfg: ModelConfig, step: int, z1: Tensor, z2: Tensor, p1: Params, p2: Params) -> list:
    """A checkpoint of a pair whose copies are models of their own (harness.point), an identity
    twin checked bit for bit (harness.check_identity)."""
    pt = harness.point(step, z1, z2, harness.qk_drift_between(p1, p2, cfg))
    harness.check_identity(pair, pt, p1.values(), (p2[k] for k in p1))
    return pt


# --- full-length pairs (§6.1, §9.7) -------------------------------------------------------------


def checkpoints(steps: int, marks=CHECKPOINTS) -> list[int]:
    """Table 9's checkpoints up to ``steps`` (§9.7): the CPU twins' rule with the float64 marks."""
    return harness.checkpoints(steps, marks)


# --- the run matrix and bundles (§10.4) ----------------------------------------------------------


def full_run_path(model: str, pair: Pair) -> str:
    """results/runs/table9/<model>/<optimizer>/<twin variant>/init<init>_seed<twin seed>.json"""
    return f"results/runs/table9/{model}/{pair.optimizer}/{pair.variant}/init{pair.init_seed}_seed{pair.twin_seed}.json"


def step1_path(model: str) -> str:
    """results/runs/table9_step1/<model>.json: the step-1 bundle of one configuration."""
    return f"results/runs/table9_step1/{model}.json"


def step0_path(model: str, init: int | str) -> str:
    """results/runs/table9_step0/<model>/init<init>.json: step 0 of the twins of one init seed,
    which the step-1 jobs of every optimizer at that seed share (float64_step1.step0)."""
    return f"results/runs/table9_step0/{model}/init{init}.json"


def step1_part_path(model: str, optimizer: str, init: int | str) -> str:
    """results/runs/table9_step1/<model>/<optimizer>_init<init>.json: the step-1 records of the
    pairs of one configuration that share a copy 1, a part of its bundle."""
    return f"results/runs/table9_step1/{model}/{optimizer}_init{init}.json"


def full_run_paths(models: list[str], pairs: list[Pair]) -> list[str]:
    return [full_run_path(model, pair) for model in models for pair in pairs]


def write_bundle(path: str | Path, recs: list[dict], provenance: dict) -> None:
    records.write_json(path, {"schema": records.TWIN_BUNDLE_SCHEMA, "records": recs, "provenance": provenance})


def read_bundle(path: str | Path) -> list[dict]:
    """Load a step-1 bundle (records.read_twin_bundle; nulls come back as NaN)."""
    return records.read_twin_bundle(path)


def configure(threads: int | None, device: str) -> torch.device:
    """The deterministic settings, in one place (runtime.configure; CUBLAS checked on CUDA)."""
    return runtime.configure(threads=threads, device=device, deterministic=True)


def setup(model: str, settings: dict, *, threads: int | None, device: str,
          corpus_path: str | Path | None) -> tuple[ModelConfig, Task, torch.dtype, torch.device]:
    """What a Table 9 job starts with (the workflow's scripts, ``gaugelab table9``): torch
    configured, the configuration, its task on the device (the corpus read for the char-LM only),
    the model dtype."""
    dev = configure(threads, device)
    cfg = config(model)
    return (cfg, make_task(cfg, corpus_path if is_text(cfg) else None, dev),
            runtime.resolve_dtype(settings["dtype"]), dev)
