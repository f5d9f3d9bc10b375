"""Tasks of the attention-twin experiments (spec: attention.md §5).

Modular addition (§5.1): sample i ∈ [0, P²) is a = ⌊i/P⌋, b = i mod P, label (a + b) mod P,
input tokens [a, b, P] with token P the "=" sign (no BOS, no operator token). One fixed split
(data seed 42, 40 % train, both parts in permutation order) serves every init seed, and every
step trains on the whole training set: full batch, no shuffling.

The character-level LM of §5.2 (tiny-Shakespeare, float64 suite) is a later addition; it will
live here beside :func:`modular_addition`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

DATA_SEED = 42
TRAIN_FRACTION = 0.4


@dataclass(frozen=True)
class Split:
    """Inputs (N, T) as token ids and labels (N,) of the training and validation parts."""

    x_train: Tensor  # (N_train, 3)
    y_train: Tensor  # (N_train,)
    x_val: Tensor    # (N_val, 3)
    y_val: Tensor    # (N_val,)


def modular_samples(P: int, index: Tensor) -> tuple[Tensor, Tensor]:
    """Tokens [a, b, P] and labels (a + b) mod P of the given sample indices."""
    a, b = index // P, index % P
    tokens = torch.stack([a, b, torch.full_like(a, P)], dim=1)  # (N, 3)
    return tokens, (a + b) % P


def modular_addition(P: int, data_seed: int = DATA_SEED, train_fraction: float = TRAIN_FRACTION) -> Split:
    """The §5.1 split: ``randperm(P²)`` from a CPU generator seeded ``data_seed``; the first
    ``int(train_fraction·P²)`` indices train, the rest validate (P = 47: 883 / 1326)."""
    perm = torch.randperm(P * P, generator=torch.Generator().manual_seed(data_seed))
    n_train = int(train_fraction * P * P)
    x_train, y_train = modular_samples(P, perm[:n_train])
    x_val, y_val = modular_samples(P, perm[n_train:])
    return Split(x_train, y_train, x_val, y_val)
