"""The convex reference row of Table 2: the minimum-nuclear-norm interpolant (spec: sensing.md §9).

min ‖X‖_* subject to A vec(X) = y, solved by Douglas–Rachford / ADMM in float64 on the zoo's own
float32 instances (X*, A and y drawn and multiplied in float32, then cast). It is what a
perfectly "gauge-blind" low-rank bias would find; the factored methods of the zoo are read
against it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor

from ..core import portable, progress, records, runtime
from . import testbed

SCHEMA = records.CONVEX_SCHEMA
FIELDS = ("seed", "rec", "erank", "nuc", "nuc_truth", "feasibility", "iterations", "primal_residual",
          "dual_residual", "converged")


def affine_projection(a: Tensor, y: Tensor) -> Callable[[Tensor], Tensor]:
    """Proj(W) = W + mat(Aᵀ (AAᵀ)⁻¹ (y − A vec W)), the exact projection onto {A vec X = y}.

    AAᵀ (m×m) is factored once by Cholesky; each projection is then two triangular solves.
    vec is row-major, as everywhere in the testbed.
    """
    chol = torch.linalg.cholesky(a @ a.T)  # (m, m)

    def project(w: Tensor) -> Tensor:
        r = (y - a @ w.reshape(-1))[:, None]  # (m, 1)
        return w + (a.T @ torch.cholesky_solve(r, chol)).reshape(w.shape)

    return project


def singular_value_threshold(w: Tensor, tau: float) -> Tensor:
    """SVT_τ(W) = U diag(max(σ − τ, 0)) Vᵀ from a thin SVD: the prox of τ‖·‖_*."""
    u, s, vh = torch.linalg.svd(w, full_matrices=False)
    return (u * (s - tau).clamp_min(0)) @ vh


@dataclass
class Solution:
    X: Tensor
    iterations: int
    primal_residual: float
    dual_residual: float
    converged: bool


def min_nuclear_norm(a: Tensor, y: Tensor, shape: tuple[int, int], *, rho: float = 1.0,
                     max_iter: int = 20000, tol: float = 1e-11) -> Solution:
    """ADMM with the scaled dual Λ (spec §9): X ← SVT_{1/ρ}(Z − Λ); Z' ← Proj(X + Λ);
    Λ ← Λ + X − Z'; stop when ‖X − Z'‖ < tol and ρ‖Z' − Z‖ < tol. The paper's ρ = 1 makes the
    threshold 1. Returns Proj(X), feasible to machine precision, whether or not it converged."""
    if a.dtype != torch.float64:
        raise ValueError(f"the convex reference runs in float64, got {a.dtype}")
    project = affine_projection(a, y)
    x = torch.zeros(shape, dtype=a.dtype)
    z = project(x)
    dual = torch.zeros_like(x)
    pr = dr = math.inf
    it = 0
    shown = progress.Progress("convex reference (ADMM iterations)", 1, max_iter)
    for it in range(1, max_iter + 1):
        shown.update(it - 1, 0)
        x = singular_value_threshold(z - dual, 1.0 / rho)
        z_new = project(x + dual)
        dual = dual + x - z_new
        pr = torch.linalg.matrix_norm(x - z_new).item()
        dr = rho * torch.linalg.matrix_norm(z_new - z).item()
        z = z_new
        if pr < tol and dr < tol:
            break
    shown.finish(it)
    return Solution(project(x), it, pr, dr, pr < tol and dr < tol)


def effective_rank_exact(sigma: Tensor) -> float:
    """Entropy effective rank over the nonzero p_i = σ_i/Σσ only, without the 1e-12 guards of
    :func:`gaugelab.sensing.testbed.effective_rank` (spec §9, §18.10; the difference is negligible)."""
    p = sigma / sigma.sum()
    p = p[p > 0]
    return math.exp(-(p * portable.log(p)).sum().item())


def reference(n: int, rank: int, per_dof: float, seed: int, *, max_iter: int = 20000, tol: float = 1e-11,
              threads: int | None = None) -> dict:
    """The reference on one zoo instance: the float32 draws of :func:`testbed.make_instance`
    (y the float32 product), cast to float64 and solved there. Returns a record."""
    runtime.configure(threads=threads)
    m = testbed.measurements(n, rank, per_dof)
    inst = testbed.make_instance(n, rank, m, seed)
    a, y, truth = inst.A.double(), inst.y.double(), inst.X.double()
    sol = min_nuclear_norm(a, y, (n, n), max_iter=max_iter, tol=tol)
    sigma = torch.linalg.svdvals(sol.X)
    return {
        "schema": SCHEMA, "experiment": "nuclear_reference", "seed": seed,
        "rec": (torch.linalg.matrix_norm(sol.X - truth) / torch.linalg.matrix_norm(truth)).item(),
        "erank": effective_rank_exact(sigma), "nuc": sigma.sum().item(),
        "nuc_truth": torch.linalg.svdvals(truth).sum().item(),
        "feasibility": (torch.linalg.vector_norm(a @ sol.X.reshape(-1) - y) / torch.linalg.vector_norm(y)).item(),
        "iterations": sol.iterations, "primal_residual": sol.primal_residual,
        "dual_residual": sol.dual_residual, "converged": sol.converged,
        "config": {"n": n, "rank": rank, "m": m, "max_iter": max_iter, "tol": tol, "rho": 1.0, "dtype": "float64"},
        "environment": runtime.environment("float64", "cpu"),
        "provenance": provenance(n, rank, per_dof, seed, max_iter=max_iter, tol=tol),
    }


def provenance(n: int, rank: int, per_dof: float, seed: int, *, max_iter: int, tol: float) -> dict:
    """A reference record's provenance (records.provenance): the instance and the solver's settings."""
    return records.provenance({"experiment": "nuclear_reference", "seed": int(seed)},
                              {"n": n, "rank": rank, "measurements_per_dof": per_dof, "max_iter": max_iter,
                               "tol": tol})


def read(path: str | Path) -> dict:
    """Load one reference record (records.load: schema and digest checked)."""
    return records.load(path, SCHEMA)
