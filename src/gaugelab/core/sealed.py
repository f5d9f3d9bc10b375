"""Sealed files: every intermediate table and final product (LaTeX and HTML tables, figures,
macros, report pages) is written with a seal beside it, ``<path>.sha256`` in sha256sum's format
(``sha256sum -c`` checks it from the working folder): the digest of its bytes and the path it was
made for.

The seal is what the workflow checks before a product is used or left standing
(:func:`problem`): a file cut short, emptied or edited no longer matches its digest; a file copied
from elsewhere with its seal (another experiment's ``summary.csv``) names another path; a file
with no seal was not written by the workflow, or its job stopped between the two writes. Run
records carry their digest inside them instead (gaugelab.core.records); both are set aside by the same
rule and remade by the job that made them.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

UMASK = os.umask(0o022)
os.umask(UMASK)


def write_atomic(path: str | Path, data: str | bytes) -> None:
    """The one atomic write: a temporary file in the same folder, synced, then renamed, so readers
    never see half a file; the mode of any other output (mkstemp makes 0600)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~UMASK)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data.encode() if isinstance(data, str) else data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def seal_of(path: str | Path) -> Path:
    path = Path(path)
    return path.with_name(path.name + ".sha256")


def _own_name(path: Path) -> str:
    """The path a seal names: relative to the working folder (the workflow's), absolute outside it."""
    relative = os.path.relpath(path)
    return str(path.resolve()) if relative.startswith("..") else relative


def seal(*paths: str | Path) -> None:
    """Seal finished files (one written by another program, e.g. a figure or pdflatex's PDF)."""
    for path in map(Path, paths):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        write_atomic(seal_of(path), f"{digest}  {_own_name(path)}\n")


def write(path: str | Path, data: str | bytes) -> None:
    """Write a product (text or bytes) atomically, then its seal."""
    write_atomic(path, data)
    seal(path)


def _names(path: Path, named: str) -> bool:
    """Whether a seal's path is ``path``'s: the same file, or its last components (a working folder
    moved or read from elsewhere)."""
    named_path = Path(named)
    if named_path.is_absolute():
        return named_path == path.resolve()
    parts = Path(os.path.normpath(named_path)).parts
    return bool(parts) and path.resolve().parts[-len(parts):] == parts


def problem(path: str | Path) -> str | None:
    """Why the existing file at ``path`` is not the sealed product made for that path, or None."""
    path = Path(path)
    side = seal_of(path)
    if not side.is_file():
        return f"{path}: no {side.name} beside it (not written by the workflow, or cut short while written)"
    digest, _, named = side.read_text(errors="replace").rstrip("\n").partition("  ")
    if digest != hashlib.sha256(path.read_bytes()).hexdigest():
        return f"{path}: does not match {side.name} (cut short, emptied or edited after it was written)"
    if not _names(path, named):
        return f"{path}: a copy of {named} (its {side.name} names that file, not this one)"
    return None
