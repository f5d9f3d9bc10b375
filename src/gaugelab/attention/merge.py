"""EXTENSION, not in the paper: per-head Procrustes alignment and merging of twins (spec:
attention.md §13).

A per-head orthogonal map changes W_Q^h and W_K^h but never the invariant M_h = (W_Q^h)ᵀ W_K^h,
so alignment can reconcile only the gauge: twins are head-mergeable only if their invariants agree.
This module aligns copy 2 (B) onto copy 1 (A) head by head, averages the two, and measures the
merged model. Every output of it is a new result, labelled "extension".
"""

from __future__ import annotations

import torch
from torch import Tensor

from . import harness, transformer
from .configs import ModelConfig
from .transformer import Params


def head_blocks(params: Params, cfg: ModelConfig, i: int, h: int) -> Tensor:
    """X = [W_Q[r_h, :] | W_K[r_h, :]] (hd × 2d) of layer i, head h, in float64 (run 0)."""
    rows = harness.head_rows(cfg, h)
    return torch.cat([params[f"l{i}.W_Q"][0][rows], params[f"l{i}.W_K"][0][rows]], dim=1).double()


def procrustes(a: Params, b: Params, cfg: ModelConfig) -> tuple[Tensor, list[float]]:
    """R (L, H, hd, hd) with R_ℓh = U Vᵀ from C = X_A X_Bᵀ = U Σ Vᵀ (det ±1, not restricted), and the
    residuals ρ_ℓh = ‖R X_B − X_A‖ / (½(‖X_A‖ + ‖X_B‖) + 1e-12), layer-major. Computed in float64."""
    rotations, residuals = [], []
    for i in range(cfg.n_layer):
        layer = []
        for h in range(cfg.n_head):
            xa, xb = head_blocks(a, cfg, i, h), head_blocks(b, cfg, i, h)
            u, _, vh = torch.linalg.svd(xa @ xb.T)
            r = u @ vh
            layer.append(r)
            residuals.append(harness.drift(r @ xb, xa))  # the same normalisation as drift (§9.1)
        rotations.append(torch.stack(layer))
    return torch.stack(rotations), residuals


def align(a: Params, b: Params, cfg: ModelConfig) -> tuple[Params, list[float]]:
    """B′: B with every head's W_Q/W_K row block left-multiplied by its Procrustes R (cast to the
    model dtype); everything else of B as it is."""
    rotations, residuals = procrustes(a, b, cfg)
    out = {k: v.detach().clone() for k, v in b.items()}
    harness.rotate_heads(out, cfg, rotations.to(b["E"].dtype), run=0)
    return out, residuals


def interpolate(a: Params, b: Params, alpha: float) -> Params:
    """θ(α) = (1 − α) θ_A + α θ_B, elementwise over every parameter."""
    return {k: (1 - alpha) * a[k].detach() + alpha * b[k].detach() for k in a}


def qk(a: Params, b: Params, cfg: ModelConfig) -> list[float]:
    """Per-head QK drift between A and B (§9.2), layer-major."""
    return harness.qk_drift_between(a, b, cfg)


def other_distance(a: Params, b: Params) -> float:
    """Relative Frobenius distance over every parameter but the W_Q/W_K, concatenated."""
    keys = [k for k in a if k.split(".")[-1] not in ("W_Q", "W_K")]
    flat = lambda p: torch.cat([p[k].detach().reshape(-1).double() for k in keys])
    return harness.drift(flat(a), flat(b))


@torch.no_grad()
def evaluate(params: Params, cfg: ModelConfig, x: Tensor, y: Tensor) -> tuple[Tensor, float, float]:
    """Logits, mean cross-entropy and accuracy (mod: last position) on (x, y)."""
    z = transformer.forward(params, x, cfg)
    return z[0], float(transformer.manual_loss(z, y)[0]), harness.accuracy(z[0], y)


def merge_report(a: Params, b: Params, cfg: ModelConfig, x_val: Tensor, y_val: Tensor,
                 x_train: Tensor | None = None, y_train: Tensor | None = None, tau: float = 1e-3,
                 alphas=(0.0, 0.25, 0.5, 0.75, 1.0)) -> dict:
    """Every §13.2 metric of one pair's merge (aligned and naive), as a flat dict."""
    b_aligned, residuals = align(a, b, cfg)
    heads = qk(a, b, cfg)
    heads_aligned = qk(a, b_aligned, cfg)
    za, la, acc_a = evaluate(a, cfg, x_val, y_val)
    zb, lb, acc_b = evaluate(b, cfg, x_val, y_val)
    zb2, _, _ = evaluate(b_aligned, cfg, x_val, y_val)
    out = {"qk_mean": sum(heads) / len(heads), "qk_max": max(heads),
           "qk_max_aligned": max(heads_aligned), "rho_mean": sum(residuals) / len(residuals),
           "rho_max": max(residuals), "other_distance": other_distance(a, b),
           "val_loss_a": la, "val_loss_b": lb, "acc_a": acc_a, "acc_b": acc_b,
           "drift_ab": harness.drift(za, zb), "drift_b_aligned_b": harness.drift(zb2, zb)}
    for kind, partner in (("aligned", b_aligned), ("naive", b)):
        merged = interpolate(a, partner, 0.5)
        zm, lm, acc_m = evaluate(merged, cfg, x_val, y_val)
        out.update({f"{kind}_val_loss": lm, f"{kind}_acc": acc_m, f"{kind}_drift_to_a": harness.drift(zm, za),
                    f"{kind}_drift_to_b": harness.drift(zm, zb), f"{kind}_barrier": lm - 0.5 * (la + lb)})
        if x_train is not None:
            out[f"{kind}_train_loss"] = evaluate(merged, cfg, x_train, y_train)[1]
        out[f"{kind}_curve"] = [[alpha, evaluate(interpolate(a, partner, alpha), cfg, x_val, y_val)[1]]
                                for alpha in alphas]
    out["tau"] = tau
    out["head_mergeable"] = bool(out["qk_max"] <= tau)
    return out


def provenance(pair_provenance: dict, tau: float) -> dict:
    """A merged pair's provenance (records.provenance): its trained pair's, and the threshold."""
    from ..core import records

    return records.provenance({**pair_provenance["what"], "merge_tau": tau},
                              {"pair": pair_provenance["settings"], "tau": tau}, pair_provenance["numerics"])
