"""The char-LM corpus of the float64 suite (spec: attention.md §5.2): tiny-Shakespeare, verified.

The file is fetched once (a local copy or its public origin), its sha256 checked, and any other
file refused: the vocabulary, the split and every batch depend on its exact bytes. The batch
stream is one shared index table drawn before any run, so both copies of every pair, of every
optimizer and seed, see the same windows in the same order.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import Tensor

from .configs import CONTEXT, STEPS, TEXT

SHA256 = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"
URL = "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt"
DATA_SEED = 42
TRAIN_FRACTION = 0.9
BATCH, VAL_WINDOWS = 32, 64
TABLE_STEPS = STEPS[TEXT]  # Table 9's char-LM budget: one batch row per step


class CorpusError(RuntimeError):
    """The corpus is missing, unreachable or not the expected file."""


def sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def verify(path: str | Path, expected: str = SHA256) -> Path:
    """Return ``path`` if its sha256 is ``expected``; otherwise fail naming both digests."""
    path = Path(path)
    if not path.is_file():
        raise CorpusError(f"tiny-Shakespeare corpus not found at {path}")
    try:
        found = sha256(path)
    except OSError as exc:
        raise CorpusError(f"cannot read the tiny-Shakespeare corpus at {path}: {exc.strerror or exc}") from None
    if found != expected:
        raise CorpusError(f"{path} is not the tiny-Shakespeare corpus: sha256 {found}, expected {expected}. "
                          "Refusing it: the vocabulary, split and batches depend on its exact bytes.")
    return path


def fetch(destination: str | Path, *, local: str | Path | None = None, url: str = URL,
          expected: str = SHA256) -> Path:
    """Put the verified corpus at ``destination``: copied from ``local`` when given, otherwise
    downloaded from ``url``. Written atomically, so a failed fetch leaves nothing behind."""
    destination = Path(destination)
    destination.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=destination.parent, prefix=f".{destination.name}.")
    os.close(fd)
    try:
        if local is not None:
            if not Path(local).is_file():
                raise CorpusError(f"configured tiny-Shakespeare path {local} does not exist")
            shutil.copyfile(local, tmp)
        else:
            try:
                with urllib.request.urlopen(url, timeout=60) as response, open(tmp, "wb") as out:
                    shutil.copyfileobj(response, out)
            except OSError as err:
                raise CorpusError(f"could not download tiny-Shakespeare from {url} ({err}); without network, "
                                  "set data.tinyshakespeare.path to a local copy") from err
        verify(tmp, expected)
        os.chmod(tmp, 0o644)
        os.replace(tmp, destination)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return destination


@dataclass(frozen=True)
class CharData:
    """The encoded corpus: sorted character vocabulary, contiguous 90/10 split, shared windows."""

    vocab: list[str]
    train: Tensor         # (N_train,) int64 ids
    val: Tensor           # (N_val,) int64 ids
    train_starts: Tensor  # (TABLE_STEPS, BATCH): row s - 1 is step s's batch
    val_starts: Tensor    # (VAL_WINDOWS,)

    def batch(self, step: int) -> tuple[Tensor, Tensor]:
        """Inputs and next-character targets (BATCH, CONTEXT) of 1-based training step ``step``."""
        return windows(self.train, self.train_starts[step - 1])

    def validation(self) -> tuple[Tensor, Tensor]:
        return windows(self.val, self.val_starts)


def windows(ids: Tensor, starts: Tensor, context: int = CONTEXT) -> tuple[Tensor, Tensor]:
    """Input ids[s : s+ctx] and target ids[s+1 : s+ctx+1] for every start s."""
    offsets = torch.arange(context)
    index = starts[:, None] + offsets
    return ids[index], ids[index + 1]


def index_table(n_train: int, n_val: int, seed: int = DATA_SEED) -> tuple[Tensor, Tensor]:
    """The full (3000 × 32) training table, then the 64 validation starts, from one generator.
    Always the full table, even for a one-step run: the validation windows come after it."""
    g = torch.Generator().manual_seed(seed)
    train_starts = torch.randint(0, n_train - CONTEXT - 1, (TABLE_STEPS, BATCH), generator=g)
    val_starts = torch.randint(0, n_val - CONTEXT - 1, (VAL_WINDOWS,), generator=g)
    return train_starts, val_starts


def load(path: str | Path, expected: str = SHA256) -> CharData:
    """Verify, decode (UTF-8, errors ignored), encode by sorted vocabulary, split, draw the table."""
    text = verify(path, expected).read_bytes().decode("utf-8", errors="ignore")
    vocab = sorted(set(text))
    lookup = {ch: i for i, ch in enumerate(vocab)}
    ids = torch.tensor([lookup[ch] for ch in text], dtype=torch.long)
    cut = int(TRAIN_FRACTION * len(ids))
    train, val = ids[:cut], ids[cut:]
    return CharData(vocab, train, val, *index_table(len(train), len(val)))
