"""Sealed files: every intermediate table and final product (LaTeX and HTML tables, figures,
macros, report pages) is written with a seal beside it, ``<path>.sha256`` in sha256sum's format
(``sha256sum -c`` checks it from the working folder): the digest of its bytes and the path it was
made for, then, as comment lines sha256sum skips, what it was made from (:func:`made_from`):
the digest of each input file and of the settings of the job that wrote it::

    <sha256>  results/zoo/summary.csv
    # from <sha256>  results/runs/zoo/adam/lr0.001/seed42.json
    # settings <sha256>

The seal is what the workflow checks before a product is used or left standing
(:func:`problem`): a file cut short, emptied or edited no longer matches its digest; a file copied
from elsewhere with its seal (another experiment's ``summary.csv``) names another path; a file
with no seal was not written by the workflow, or its job stopped between the two writes; a file
whose inputs have changed or gone since was made from other data than stands there now. Run
records carry their digest inside them instead (gaugelab.core.records); both are set aside by the same
rule and remade by the job that made them.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path

UMASK = os.umask(0o022)
os.umask(UMASK)

# A JSON record's fields that say when it was made (its job's wall-clock time, a census row's
# measured seconds) and the payload digest that covers them: what differs between two runs of one
# computation on one machine.
TIMING = frozenset({"wall_s", "seconds", "digest"})
# ... and where (its machine, versions, threads and SLURM job): what differs between two runs of
# one computation anywhere.
CIRCUMSTANCES = TIMING | {"environment"}

_made_from: tuple[str, ...] = ()  # the seal lines naming what this process's products are made from


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


def content(value, leave_out: frozenset = CIRCUMSTANCES):
    """A JSON value without the fields ``leave_out`` (:data:`CIRCUMSTANCES`, or :data:`TIMING`
    to compare two runs on one machine), at any depth: a bundle's members have theirs."""
    if isinstance(value, dict):
        return {k: content(v, leave_out) for k, v in value.items() if k not in leave_out}
    return [content(v, leave_out) for v in value] if isinstance(value, list) else value


_digests: dict[tuple, str] = {}  # (path, size, mtime) -> digest: a parse checks many seals naming one input


def input_digest(path: str | Path) -> str:
    """The digest a seal names an input by: of its bytes, or, for a JSON record, of its content
    without the circumstances of its making (:data:`CIRCUMSTANCES`), so a rerun of the same
    computation, here, on another machine or through SLURM, is the same input and the products built
    from it stay byte for byte what they were, seals included."""
    path = Path(path)
    st = path.stat()
    key = (str(path.resolve()), st.st_size, st.st_mtime_ns)
    if key not in _digests:
        data = path.read_bytes()
        if path.suffix == ".json":
            try:
                data = json.dumps(content(json.loads(data)), sort_keys=True, separators=(",", ":")).encode()
            except ValueError:  # not JSON: its bytes (the record's own check names what is wrong)
                pass
        _digests[key] = hashlib.sha256(data).hexdigest()
    return _digests[key]


def _plain(value):
    """JSON for the settings a job is given beyond its files (paths, dataclasses, sets)."""
    if isinstance(value, Path):
        return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"a setting of type {type(value).__name__} has no canonical JSON")


def made_from(inputs: Iterable[str | Path] = (), settings: Mapping | None = None) -> None:
    """Name what every product this process writes from now on is made from: its input files
    (the digest of each as it is now) and the settings that determine it beyond them; the seal
    records both and :func:`problem` checks them. No argument: nothing named. Files outside the
    working folder are not named: they are the workflow's own sources (Snakemake's code trigger
    reruns a job when they change), which Snakemake reads from a cache folder of its own."""
    inside = [p for p in dict.fromkeys(map(str, inputs)) if Path(p).is_file() and not _outside(Path(p))]
    lines = [f"# from {input_digest(p)}  {_own_name(Path(p))}" for p in inside]
    if settings is not None:
        canonical = json.dumps(dict(settings), sort_keys=True, separators=(",", ":"), default=_plain)
        lines.append(f"# settings {hashlib.sha256(canonical.encode()).hexdigest()}")
    global _made_from
    _made_from = tuple(lines)


def made_from_job(job) -> None:
    """:func:`made_from` for a Snakemake script's job (its ``snakemake`` object): its input files
    and its params. The set-aside files a job takes as input (``input.set_aside``, the workflow's
    way to rerun it) are not what it is made from."""
    aside = set(map(str, job.input.get("set_aside", [])))
    made_from([p for p in job.input if str(p) not in aside], dict(job.params.items()))


def seal_of(path: str | Path) -> Path:
    path = Path(path)
    return path.with_name(path.name + ".sha256")


def _outside(path: Path) -> bool:
    return os.path.relpath(path).startswith("..")


def _own_name(path: Path) -> str:
    """The path a seal names: relative to the working folder (the workflow's), absolute outside it."""
    return str(path.resolve()) if _outside(path) else os.path.relpath(path)


def seal(*paths: str | Path) -> None:
    """Seal finished files (one written by another program, e.g. a figure or pdflatex's PDF)."""
    for path in map(Path, paths):
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        write_atomic(seal_of(path), "".join(f"{line}\n" for line in (f"{digest}  {_own_name(path)}", *_made_from)))


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
    first, *lines = side.read_text(errors="replace").splitlines() or [""]
    digest, _, named = first.partition("  ")
    if digest != hashlib.sha256(path.read_bytes()).hexdigest():
        return f"{path}: does not match {side.name} (cut short, emptied or edited after it was written)"
    if not _names(path, named):
        return f"{path}: a copy of {named} (its {side.name} names that file, not this one)"
    root = _working_folder(path, named)
    for line in (line for line in lines if line.startswith("# from ")):
        digest, _, name = line.removeprefix("# from ").partition("  ")
        source = root / name
        if not source.is_file():
            return f"{path}: made from {name}, which is no longer there"
        if input_digest(source) != digest:
            return f"{path}: made from {name}, which has changed since (remade or edited)"
    return None


def _working_folder(path: Path, named: str) -> Path:
    """The folder a seal's relative names start from: the one ``path`` was made in, wherever it
    is now (see :func:`_names`)."""
    if Path(named).is_absolute():
        return Path("/")
    depth = len(Path(os.path.normpath(named)).parts)
    return path.resolve().parents[depth - 1]
