"""Attention-head gauge twins (Section 6; spec: attention.md §1, §6–§10).

A pair is two copies of one initial model. Copy 2 is transformed before training, the two train
side by side on the same full batch, each with its own optimizer state, and their functions are
compared on the validation inputs at checkpoints:

- **gauge** twin: a random orthogonal A per (layer, head) on that head's W_Q/W_K row blocks, the
  same A for Q and K. The function is unchanged; only the basis of each head moves.
- **identity** twin: the same code path with A = I. Copy 2 must stay bit-identical to copy 1
  (drift exactly 0.0): the determinism control. The job fails otherwise, naming the pair.
- **noise** twin: i.i.d. Gaussian noise of scale σ on every entry of W_Q and W_K, same basis.

The two copies advance as one batched program (a leading run dimension of 2; see
:mod:`gaugelab.transformer`). Every operation acts on each run separately, so a copy's numbers
are bit-identical to the same copy trained alone (``tests/test_twins.py`` checks this).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import torch
from torch import Tensor

from . import cards, optim, progress, records, runtime, tasks, transformer
from .transformer import ModelConfig, Params

SCHEMA = records.TWIN_SCHEMA
OPTIMIZERS = cards.twin_optimizers()  # table order: adam, sgd, scalar_adam, muon
TWINS = ("gauge", "identity", "noise")
NOISE_SEED = 888
STATUS_OK, STATUS_NONFINITE = "ok", "nonfinite"


class DeterminismError(RuntimeError):
    """An identity twin that left its base: the harness is not deterministic."""


@dataclass(frozen=True)
class Pair:
    """The key of one twin run (§10): with the settings, it determines the run completely."""

    optimizer: str
    twin: str
    init_seed: int
    twin_seed: int      # the gauge seed; 888 for noise; 0 for identity
    sigma: float = 0.0  # noise scale (noise twins only)

    def __post_init__(self):
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"unknown twin optimizer {self.optimizer!r}; use one of {OPTIMIZERS}")
        if self.twin not in TWINS:
            raise ValueError(f"unknown twin {self.twin!r}; use one of {TWINS}")
        if (self.twin == "noise") != (self.sigma > 0):
            raise ValueError(f"{self.twin} twin with sigma {self.sigma}: only noise twins have sigma > 0")

    @classmethod
    def of(cls, optimizer: str, twin: str, init: int, seed: int | None = None, sigma: float = 0.0) -> "Pair":
        """A pair with the protocol's twin seed filled in (0 for identity, 888 for noise)."""
        default = {"identity": 0, "noise": NOISE_SEED}.get(twin)
        if seed is None and default is None:
            raise ValueError(f"a {twin} twin needs its twin seed (the seed of the gauge draw)")
        return cls(optimizer, twin, int(init), int(default if seed is None else seed), float(sigma))

    @property
    def variant(self) -> str:
        """The twin with its scale: ``gauge``, ``identity``, ``noise1e-07`` (a path component)."""
        return f"noise{self.sigma:g}" if self.twin == "noise" else self.twin

    def __str__(self) -> str:
        return f"{self.optimizer} {self.variant} twin (init {self.init_seed}, twin seed {self.twin_seed})"


def parse_variant(variant: str) -> tuple[str, float]:
    """Inverse of :attr:`Pair.variant`: ``noise1e-07`` -> ("noise", 1e-7)."""
    if variant.startswith("noise"):
        return "noise", float(variant[len("noise"):])
    return variant, 0.0


# --- twin construction (§7): copy 2 is run 1 of the stacked parameters -------------------------


def head_rows(cfg: ModelConfig, h: int) -> slice:
    """Head h owns rows h·hd … (h+1)·hd − 1 of the (out, in) W_Q and W_K (§3.1)."""
    return slice(h * cfg.hd, (h + 1) * cfg.hd)


def gauge_rotations(cfg: ModelConfig, seed: int, dtype: torch.dtype) -> Tensor:
    """A (L, H, hd, hd): Q factors of randn(hd, hd) drawn in L0H0, L0H1, … order from one CPU
    generator seeded ``seed``, with no sign fix (det A may be −1). The dtype picks the stream."""
    gen = torch.Generator().manual_seed(seed)
    draws = [[torch.linalg.qr(torch.randn(cfg.hd, cfg.hd, generator=gen, dtype=dtype), mode="reduced").Q
              for _ in range(cfg.n_head)] for _ in range(cfg.n_layer)]
    return torch.stack([torch.stack(layer) for layer in draws])


@torch.no_grad()
def rotate_heads(params: Params, cfg: ModelConfig, rotations: Tensor, run: int = 1) -> None:
    """In place: W_Q[r_h] ← A W_Q[r_h] and W_K[r_h] ← A W_K[r_h] (the same A) for every head of
    every layer of run ``run``. Left multiplication of the row block: never the input side."""
    for i in range(cfg.n_layer):
        for h in range(cfg.n_head):
            rows, a = head_rows(cfg, h), rotations[i, h].to(params["E"].device)
            for name in ("W_Q", "W_K"):
                w = params[f"l{i}.{name}"][run]
                w[rows] = a @ w[rows]


@torch.no_grad()
def add_noise(params: Params, cfg: ModelConfig, sigma: float, seed: int = NOISE_SEED, run: int = 1) -> None:
    """In place: per layer, W_Q += σ·randn(d, d), then W_K += σ·randn(d, d), one CPU generator."""
    gen = torch.Generator().manual_seed(seed)
    for i in range(cfg.n_layer):
        for name in ("W_Q", "W_K"):
            w = params[f"l{i}.{name}"][run]
            w += sigma * torch.randn(cfg.d, cfg.d, generator=gen, dtype=w.dtype).to(w.device)


def make_twin(params: Params, cfg: ModelConfig, pair: Pair, run: int = 1) -> None:
    """Apply the pair's twin transform to run ``run`` (copy 2), in place."""
    dtype = params["E"].dtype
    if pair.twin == "gauge":
        rotate_heads(params, cfg, gauge_rotations(cfg, pair.twin_seed, dtype), run)
    elif pair.twin == "identity":
        eye = torch.eye(cfg.hd, dtype=dtype).expand(cfg.n_layer, cfg.n_head, cfg.hd, cfg.hd)
        rotate_heads(params, cfg, eye, run)  # the multiplication is performed; it is exact
    else:
        add_noise(params, cfg, pair.sigma, pair.twin_seed, run)


# --- metrics (§9) -------------------------------------------------------------------------------


@torch.no_grad()
def drift(z1: Tensor, z2: Tensor) -> float:
    """‖z₁ − z₂‖_F / (½(‖z₁‖_F + ‖z₂‖_F) + 1e-12), one norm over the whole tensor; in [0, 2]."""
    norm = lambda x: float(torch.linalg.vector_norm(x))
    return norm(z1 - z2) / (0.5 * (norm(z1) + norm(z2)) + 1e-12)


@torch.no_grad()
def qk_invariants(params: Params, cfg: ModelConfig, run: int) -> Tensor:
    """M_ℓh = (W_Q[r_h])ᵀ W_K[r_h], the d×d per-head invariant: (L, H, d, d)."""
    out = []
    for i in range(cfg.n_layer):
        wq, wk = params[f"l{i}.W_Q"][run], params[f"l{i}.W_K"][run]
        out.append(torch.stack([wq[head_rows(cfg, h)].T @ wk[head_rows(cfg, h)] for h in range(cfg.n_head)]))
    return torch.stack(out)


def qk_drift(params: Params, cfg: ModelConfig, run: int = 1) -> list[float]:
    """r_ℓh = drift(M¹_ℓh, M²_ℓh) for every head, layer-major (L·H values); copy 2 is run ``run``."""
    m1, m2 = qk_invariants(params, cfg, 0), qk_invariants(params, cfg, run)
    return [drift(a, b) for a, b in zip(m1.flatten(0, 1), m2.flatten(0, 1))]


def accuracy(logits: Tensor, labels: Tensor) -> float:
    return float((logits.argmax(dim=-1) == labels).to(torch.float64).mean())


# --- optimizers (§6) ----------------------------------------------------------------------------


def make_rule(optimizer: str, names: list[str], settings: dict) -> optim.Rule:
    """The pair's update rule, from the one definition in :mod:`gaugelab.optim`: Adam; SGD =
    heavy-ball momentum (no dampening); scalar-Adam (one scalar over every parameter); Muon =
    the hybrid (NS5 on every W_Q, W_K, W_V, W_O, W_1, W_2; Adam at ``lr_aux`` on the rest)."""
    if optimizer == "adam":
        return optim.adam()
    if optimizer == "sgd":
        return optim.momentum(settings["momentum"])
    if optimizer == "scalar_adam":
        return optim.scalar_adam()
    return optim.muon_hybrid([transformer.is_matrix(n) for n in names], lr_aux=settings["lr_aux"],
                             beta=settings["momentum"])


# --- the run (§6.1, §8, §9.7) -------------------------------------------------------------------


def model_config(settings: dict) -> ModelConfig:
    return transformer.mod_config(settings["P"], settings["L"], settings["d"], settings["H"])


def checkpoints(settings: dict) -> list[int]:
    """The configured checkpoints up to the step budget, with step 0 and the last step."""
    steps = settings["steps"]
    return sorted({0, steps} | {s for s in settings["checkpoints"] if s <= steps})


def _flatten(tensors: list[Tensor]) -> Tensor:
    """(B, ...) tensors as one (B, total) tensor, run by run."""
    return torch.cat([t.detach().reshape(t.shape[0], -1) for t in tensors], dim=1)


def train(params: Params, cfg: ModelConfig, rule: optim.Rule, lr: float, x: Tensor, y: Tensor,
          steps: int) -> Iterator[int]:
    """The twin loop (§6.1): every run of ``params`` (copy 1, copy 2, …) trains on the same full
    batch with its own optimizer state, in place. Yields s after the s-th update of every run;
    stops early, before updating, when a loss is non-finite (the run's status is then nonfinite).

    One program advances all runs: the loss is the sum of the per-run mean losses, so each run's
    gradient is that of its own loss, and every operation acts on each run separately.
    """
    leaves = [p.requires_grad_(True) for p in params.values()]
    state = _init_state(rule, leaves)
    for step in range(1, steps + 1):
        losses = transformer.loss(transformer.forward(params, x, cfg), y)  # (B,)
        if not bool(torch.isfinite(losses).all()):
            return
        state = _update(leaves, losses, rule, state, lr, step)
        yield step


def _init_state(rule: optim.Rule, leaves: list[Tensor]) -> optim.State:
    """Separate state per run: every buffer has the run dimension. A rule that works entry by
    entry (Adam, SGD) updates every parameter as one flat tensor: the same arithmetic in a dozen
    operations instead of a dozen per parameter."""
    return rule.init([_flatten(leaves)] if rule.batching == "entry" else leaves)


def _update(leaves: list[Tensor], losses: Tensor, rule: optim.Rule, state: optim.State, lr: float,
            step: int) -> optim.State:
    """One update of every run, in place: the gradient of the sum of the per-run losses is each
    run's own. Returns the new state."""
    grads = torch.autograd.grad(losses.sum(), leaves)
    if rule.batching == "entry":
        (delta,), state = rule.update([_flatten(grads)], state, lr, step)
        deltas = [d.view(p.shape) for d, p in zip(delta.split([p[0].numel() for p in leaves], dim=1), leaves)]
    else:
        deltas, state = rule.update(grads, state, lr, step)
    with torch.no_grad():
        for p, d in zip(leaves, deltas):
            p.add_(d)
    return state


def base_of(pair: Pair) -> tuple[str, int]:
    """What a pair's copy 1 depends on besides the settings: its optimizer and init seed. Pairs
    that share it share copy 1, which :func:`train_base` trains once for all of them."""
    return pair.optimizer, pair.init_seed


def by_base(pairs: list[Pair]) -> dict[tuple[str, int], list[Pair]]:
    """The pairs, each once, grouped by :func:`base_of`; groups and pairs in first-listed order."""
    groups: dict[tuple[str, int], list[Pair]] = {}
    for pair in dict.fromkeys(pairs):
        groups.setdefault(base_of(pair), []).append(pair)
    return groups


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
    if not pairs or len({base_of(p) for p in pairs}) != 1 or len(set(pairs)) != len(pairs):
        raise ValueError(f"one batch is distinct pairs of one optimizer and init seed: {[str(p) for p in pairs]}")
    dev = runtime.configure(threads=threads, device=device)
    cfg = model_config(settings)
    split = tasks.modular_addition(cfg.vocab_out, settings["data_seed"], settings["train_fraction"])
    x_train, y_train, x_val, y_val = (t.to(dev) for t in (split.x_train, split.y_train, split.x_val, split.y_val))
    optimizer, init_seed = base_of(pairs[0])
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
            heads = qk_drift(params, cfg, run)
            point = [step, drift(z[0], z[run]), sum(heads) / len(heads), max(heads)]
            if pairs[i].twin == "identity":
                same = all(torch.equal(p[0], p[run]) for p in params.values())
                if not (same and point[1] == 0.0 and point[2] == 0.0):
                    raise DeterminismError(f"{pairs[i]}: copy 2 is not bit-identical to copy 1 at step {step} "
                                           f"(drift {point[1]:.3e}, QK drift {point[2]:.3e}); the harness is "
                                           "not deterministic")
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
            ends = {"acc1": accuracy(z_val[0], y_val), "acc2": accuracy(z_val[1], y_val),
                    "val_losses": transformer.loss(z_val, y_val),
                    "train_losses": transformer.loss(z_train[[0, run]], y_train)}
            out[i] = _record(pairs[i], cfg, settings, lr, str(params["E"].dtype).removeprefix("torch."), dev,
                             curves[i], last, qk_drift(params, cfg, run), ends, start)
            if log is not None:
                log(pairs[i], out[i])

    evaluate(0, alive)
    leaves = [p.requires_grad_(True) for p in params.values()]
    state = _init_state(rule, leaves)
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
        state = _update(leaves, losses, rule, state, lr, step)
        last = step
        shown.update(step, len(pairs) - len(alive))
        if step in marks:
            evaluate(step, alive)
    if alive:
        finish(alive, last)
    shown.finish(last)
    return out


def _record(pair: Pair, cfg: ModelConfig, settings: dict, lr: float, dtype: str, dev, curve: list, last: int,
            per_head: list[float], ends: dict, start: float) -> dict:
    """A pair's run record (§10.5, the twin schema)."""
    val_losses, train_losses = ends["val_losses"], ends["train_losses"]
    return {
        "schema": SCHEMA, "config": cfg.name, "task": f"mod{cfg.vocab_out}", "P": cfg.vocab_out,
        "L": cfg.n_layer, "d": cfg.d, "H": cfg.n_head, "hd": cfg.hd, "mlp": cfg.mlp, "n_ctx": cfg.n_ctx,
        "steps": settings["steps"], "steps_done": last, "dtype": dtype, "device": str(dev),
        "optimizer": pair.optimizer, "lr": float(lr),
        "lr_aux": float(settings["lr_aux"]) if pair.optimizer == "muon" else None,
        "twin": pair.twin, "init_seed": pair.init_seed, "twin_seed": pair.twin_seed, "sigma": pair.sigma,
        "data_seed": settings["data_seed"],
        "curve": curve, "per_head_final": per_head,
        "acc1": ends["acc1"], "acc2": ends["acc2"],
        "val_loss1": float(val_losses[0]), "val_loss2": float(val_losses[1]),
        "train_loss1": float(train_losses[0]), "train_loss2": float(train_losses[1]),
        # every checkpoint of an identity twin was checked bit for bit (else DeterminismError)
        "status": STATUS_OK if last == settings["steps"] else STATUS_NONFINITE,
        "identity_exact": True if pair.twin == "identity" else None,
        # the batch's time so far: the pairs of one base share their wall time
        "wall_s": round(time.perf_counter() - start, 3),
        "env": runtime.environment(dtype, dev),
        "provenance": provenance(pair, settings),
    }


def run_settings(settings: dict, optimizer: str) -> dict:
    """Every setting of the ``twins`` block that determines one optimizer's pairs (the other
    optimizers' learning rates, the run sets and the D.5 threshold do not)."""
    out = {k: v for k, v in settings.items() if k not in ("lr", "lr_aux", "sets", "tau_decades")}
    out["lr"] = float(settings["lr"][optimizer])
    if optimizer == "muon":
        out["lr_aux"] = float(settings["lr_aux"])
    return out


def provenance(pair: Pair, settings: dict) -> dict:
    """A pair record's provenance (records.provenance); the workflow computes the same to check a
    record it finds at the pair's path."""
    what = {"config": model_config(settings).name, "optimizer": pair.optimizer, "twin": pair.twin,
            "init_seed": pair.init_seed, "twin_seed": pair.twin_seed, "sigma": float(pair.sigma),
            "steps": int(settings["steps"])}
    return records.provenance(what, run_settings(settings, pair.optimizer))
