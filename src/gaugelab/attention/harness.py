"""The twin harness: what every attention twin run shares (spec: attention.md §7–§10.5).

Section 6's CPU float32 twins (:mod:`gaugelab.attention.twins`) and Table 9's float64 suite
(:mod:`gaugelab.attention.float64`) run one protocol on two models. What the spec says once for both is
written here once:

- **pairs** (§10) are :mod:`gaugelab.attention.pairs`'s;
- the **twin constructions** (§7), applied in place to one run of batched parameters: a gauge
  rotation per head, the identity (the same code path with A = I), the noise. The parameters'
  dtype picks the draw stream: float32 on the CPU set, float64 in Table 9's;
- the **metrics** (§9): drift, per-head QK drift, accuracy, and a checkpoint's row;
- the **determinism control** (§8): an identity twin is bit-identical to its base at every
  checkpoint, or the job fails (:func:`check_identity`);
- the **run record** (§10.5) and its provenance.

What differs by spec stays with each set: the model's initialisation, embedding, loss and dtype,
the task, the checkpoints, the learning rates, the loops and their batching.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

import torch
from torch import Tensor

from ..core import records, runtime
from ..optim import cards
from .configs import ModelConfig
from .pairs import NOISE_SEED, Pair
from .transformer import Params

STATUS_OK, STATUS_NONFINITE = "ok", "nonfinite"


class DeterminismError(RuntimeError):
    """An identity twin that left its base: the harness is not deterministic."""


# --- twin construction (§7): in place, on run ``run`` of batched parameters ---------------------


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
    """Apply the pair's twin transform to run ``run`` (copy 2), in place, draws in the model dtype."""
    dtype = params["E"].dtype
    if pair.twin == "gauge":
        rotate_heads(params, cfg, gauge_rotations(cfg, pair.twin_seed, dtype), run)
    elif pair.twin == "identity":
        eye = torch.eye(cfg.hd, dtype=dtype).expand(cfg.n_layer, cfg.n_head, cfg.hd, cfg.hd)
        rotate_heads(params, cfg, eye, run)  # the multiplication is performed; it is exact
    else:
        add_noise(params, cfg, pair.sigma, pair.twin_seed, run)


def twin_of(base: Params, cfg: ModelConfig, pair: Pair) -> Params:
    """Copy 2 as a model of its own: a clone of ``base`` (run dimension 1) with the pair's twin."""
    params = {k: v.detach().clone() for k, v in base.items()}
    make_twin(params, cfg, pair, run=0)
    return params


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
    """r_ℓh = drift(M¹_ℓh, M²_ℓh) for every head, layer-major (L·H values); copy 1 is run 0 and
    copy 2 is run ``run``."""
    m1, m2 = qk_invariants(params, cfg, 0), qk_invariants(params, cfg, run)
    return [drift(a, b) for a, b in zip(m1.flatten(0, 1), m2.flatten(0, 1))]


@torch.no_grad()
def qk_drift_between(p1: Params, p2: Params, cfg: ModelConfig) -> list[float]:
    """:func:`qk_drift` of two models of their own (run dimension 1 each)."""
    both = {f"l{i}.{n}": torch.cat([p1[f"l{i}.{n}"], p2[f"l{i}.{n}"]]).detach()
            for i in range(cfg.n_layer) for n in ("W_Q", "W_K")}
    return qk_drift(both, cfg)


def accuracy(logits: Tensor, labels: Tensor) -> float:
    """The fraction of examples whose argmax is the label (mod: last position, §9.3)."""
    return float((logits.argmax(dim=-1) == labels).to(torch.float64).mean())


def point(step: int, z1: Tensor, z2: Tensor, heads: list[float]) -> list:
    """A checkpoint's curve row (§9.7): [step, drift, QK mean, QK max]."""
    return [step, drift(z1, z2), sum(heads) / len(heads), max(heads)]


def checkpoints(steps: int, marks: Iterable[int]) -> list[int]:
    """The checkpoints of a run of ``steps`` (§9.7): step 0, the marks up to ``steps``, the last step."""
    return sorted({0, steps} | {s for s in marks if s <= steps})


# --- the determinism control (§7.2, §8) ---------------------------------------------------------

_BITS = {torch.float64: torch.int64, torch.float32: torch.int32, torch.float16: torch.int16,
         torch.bfloat16: torch.int16}


def bit_identical(a: Sequence[Tensor], b: Sequence[Tensor]) -> bool:
    """Every tensor pair equal bit for bit (so NaN == NaN, and -0.0 != 0.0): shapes, dtypes and
    the bits of every entry. ``torch.equal`` compares values instead (NaN != NaN, -0.0 == 0.0)."""
    def bits(x: Tensor) -> Tensor:
        return x.detach().contiguous().view(_BITS[x.dtype]) if x.dtype in _BITS else x
    return len(a) == len(b) and all(x.shape == y.shape and x.dtype == y.dtype and torch.equal(bits(x), bits(y))
                                    for x, y in zip(a, b))


def check_identity(pair: Pair, pt: list, copy1: Iterable[Tensor], copy2: Iterable[Tensor]) -> None:
    """The determinism control (§8): an identity twin's copy 2 is bit-identical to copy 1 (every
    parameter, in the same order) and its checkpoint ``pt`` has drift and QK drift exactly 0.0,
    or the job fails naming the pair. Other twins pass unchecked."""
    if pair.twin != "identity":
        return
    same = bit_identical(list(copy1), list(copy2))
    if not (same and pt[1] == 0.0 and pt[2] == 0.0):
        raise DeterminismError(f"{pair}: copy 2 is not bit-identical to copy 1 at step {pt[0]} (drift {pt[1]:.3e}, "
                               f"QK drift {pt[2]:.3e}); the harness is not deterministic")


# --- the run record (§10.5) ---------------------------------------------------------------------


def summary(record: dict) -> str:
    """A finished pair's line in its job's log: status, drift at step 1 and at the end, time."""
    return (f"{record['status']}, drift at step 1 {record['curve'][1][1]:.3e}, final {record['curve'][-1][1]:.3e}, "
            f"{record['wall_s']:.1f} s" + (" (determinism OK)" if record["identity_exact"] else ""))


def record(pair: Pair, cfg: ModelConfig, *, task: str, steps: int, steps_done: int, dtype: torch.dtype, device,
           lr: float, lr_aux: float, data_seed: int, curve: list, per_head: list[float], ends: dict, status: str,
           start: float, provenance: dict, label: str | None = None) -> dict:
    """A pair's run record (§10.5, the twin schema). ``ends`` holds the end-of-run metrics in
    record order (accuracies and losses, §9.3: which ones is each set's); ``label`` (Table 9's
    block label) follows the configuration when given; ``lr_aux`` is recorded for Muon only;
    ``wall_s`` is the time since ``start``."""
    name = str(dtype).removeprefix("torch.")
    return {
        "schema": records.TWIN_SCHEMA, "config": cfg.name, **({} if label is None else {"label": label}),
        "task": task, "P": cfg.vocab_out,
        "L": cfg.n_layer, "d": cfg.d, "H": cfg.n_head, "hd": cfg.hd, "mlp": cfg.mlp, "n_ctx": cfg.n_ctx,
        "steps": steps, "steps_done": steps_done, "dtype": name, "device": str(device),
        "optimizer": pair.optimizer, "lr": float(lr),
        "lr_aux": float(lr_aux) if cards.card(pair.optimizer).lr_aux else None,
        "twin": pair.twin, "init_seed": pair.init_seed, "twin_seed": pair.twin_seed, "sigma": pair.sigma,
        "data_seed": data_seed, "curve": curve, "per_head_final": per_head, **ends,
        # every checkpoint of an identity twin was checked bit for bit (else DeterminismError)
        "status": status, "identity_exact": True if pair.twin == "identity" else None,
        "wall_s": round(time.perf_counter() - start, 3), "env": runtime.environment(name, device),
        "provenance": provenance,
    }


def provenance(config: str, pair: Pair, steps: int, settings: dict) -> dict:
    """A pair record's provenance (records.provenance): the pair's key in its configuration, and
    the settings that determine it (each set says which); the workflow computes the same to check
    a record it finds at the pair's path."""
    what = {"config": config, "optimizer": pair.optimizer, "twin": pair.twin, "init_seed": pair.init_seed,
            "twin_seed": pair.twin_seed, "sigma": float(pair.sigma), "steps": int(steps)}
    return records.provenance(what, settings)
