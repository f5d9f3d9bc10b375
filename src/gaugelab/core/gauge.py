"""The factorisation's symmetry (spec: identities.md §3.1, §3.5).

W = U Vᵀ is the represented matrix. GL(k) acts on the factors by (U, V) ↦ (UM, VM⁻ᵀ), which keeps
W and hence every loss of W; the orthogonal subgroup O(k), acting by (U, V) ↦ (UQ, VQ), is the
gauge: the elements that also keep the parameter norm ‖U‖² + ‖V‖². The property suite and the
analysis share these definitions so that "rotated run", "product" and "balancedness" mean one
thing everywhere. Every function acts on the last two dimensions, so a leading run dimension
(B, n, k) passes through unchanged, and nothing downcasts.
"""

from __future__ import annotations

import torch
from torch import Tensor


def gl_action(u: Tensor, v: Tensor, m: Tensor) -> tuple[Tensor, Tensor]:
    """(U, V) ↦ (UM, VM⁻ᵀ) for invertible M, with a true inverse: preserves UVᵀ exactly in
    exact arithmetic, and the parameter norm only when M is orthogonal."""
    return u @ m, v @ torch.linalg.inv(m).mT


def gauge_action(u: Tensor, v: Tensor, q: Tensor) -> tuple[Tensor, Tensor]:
    """The O(k) gauge (U, V) ↦ (UQ, VQ), i.e. the GL action with Q⁻ᵀ = Q written out, so an
    orthogonal Q is applied without an inversion round-off. Q must be orthogonal."""
    return u @ q, v @ q


def haar_orthogonal(k: int, generator: torch.Generator, dtype: torch.dtype) -> Tensor:
    """Haar on O(k): QR of a k×k Gaussian drawn in ``dtype``, column signs fixed by diag(R)."""
    q, r = torch.linalg.qr(torch.randn(k, k, generator=generator, dtype=dtype))
    return q * torch.sign(torch.diagonal(r)).unsqueeze(0)


def product(u: Tensor, v: Tensor) -> Tensor:
    """The represented matrix W = U Vᵀ: the only thing the loss sees."""
    return u @ v.mT


def param_norm_sq(u: Tensor, v: Tensor) -> Tensor:
    """‖U‖² + ‖V‖² (Frobenius), per run: invariant under O(k), not under the rest of GL(k)."""
    return (u * u).sum(dim=(-2, -1)) + (v * v).sum(dim=(-2, -1))


def balance(u: Tensor, v: Tensor) -> Tensor:
    """The k×k balancedness matrix UᵀU − VᵀV (Prop A.4): conserved by flows with one common
    scalar preconditioner, drifted by anisotropic ones. Its norm is the ``bal`` metric."""
    return u.mT @ u - v.mT @ v


def msign(g: Tensor) -> Tensor:
    """The exact polar factor A Bᵀ of the thin SVD G = A Σ Bᵀ (transfer function h ≡ 1).

    This is the limit object of Muon and of undamped one-step Shampoo; Muon's NS5 is only an
    approximation of it (optim.newton_schulz), so the two are never interchangeable.
    """
    a, _, bh = torch.linalg.svd(g, full_matrices=False)
    return a @ bh
