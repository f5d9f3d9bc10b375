"""Run records: one JSON file per run, written atomically, validated when read.

NaN (a diverged run's metrics) is stored as null so the files are strict JSON. A record that does
not parse or lacks a field is an error that names the file: it is never tabulated.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

SCHEMA = "gaugelab.run/1"
STATUSES = ("interpolated", "budget", "diverged")
REQUIRED = {
    "schema": str, "experiment": str, "method": str, "lr": float, "seed": int,
    "perturbation": float, "status": str, "steps": int,
    "train": (float, type(None)), "rec": (float, type(None)), "erank": (float, type(None)),
    "nuc": (float, type(None)), "bal": (float, type(None)),
    "curve": dict, "config": dict, "environment": dict,
}


_UMASK = os.umask(0o022)
os.umask(_UMASK)


class RecordError(ValueError):
    """A record file that is missing, cut short or malformed."""


def _to_json(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_json(v) for v in value]
    return value


def _from_json(value: Any) -> Any:
    return math.nan if value is None else value


def write_json(path: str | Path, payload: dict) -> None:
    """Write to a temporary file in the same folder, then rename: readers never see half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(_to_json(payload), indent=1, sort_keys=True, allow_nan=False) + "\n"
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)  # mkstemp makes 0600; a record is as readable as any output
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def validate(record: dict, source: str = "record") -> dict:
    """Check fields and types; raise :class:`RecordError` naming ``source`` on the first problem."""
    for key, kind in REQUIRED.items():
        if key not in record:
            raise RecordError(f"{source}: missing field {key!r}")
        value = record[key]
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            continue
        if not isinstance(value, kind):
            raise RecordError(f"{source}: field {key!r} has type {type(value).__name__}")
    if record["schema"] != SCHEMA:
        raise RecordError(f"{source}: schema {record['schema']!r}, expected {SCHEMA!r}")
    if record["status"] not in STATUSES:
        raise RecordError(f"{source}: unknown status {record['status']!r}")
    curve = record["curve"]
    if set(curve) != {"step", "loss"} or len(curve["step"]) != len(curve["loss"]):
        raise RecordError(f"{source}: curve must have equally long 'step' and 'loss' lists")
    return record


def _load_object(path: Path) -> dict:
    """The JSON object in ``path``, or a RecordError saying what is wrong with the file."""
    try:
        record = json.loads(path.read_text())
    except FileNotFoundError:
        raise RecordError(f"{path}: no such record") from None
    except json.JSONDecodeError as exc:
        raise RecordError(f"{path}: not valid JSON (cut short?): {exc}") from None
    if not isinstance(record, dict):
        raise RecordError(f"{path}: not a JSON object")
    return record


def read(path: str | Path) -> dict:
    """Load and validate one record; NaN comes back for the nulls of the metric fields."""
    path = Path(path)
    record = _load_object(path)
    validate(record, str(path))
    for key in ("train", "rec", "erank", "nuc", "bal"):
        record[key] = _from_json(record[key])
    return record


def is_valid(path: str | Path, bundle: bool = False, twin: bool = False) -> bool:
    try:
        read_twin(path) if twin else read_bundle(path) if bundle else read(path)
    except RecordError:
        return False
    return True


def write_bundle(path: str | Path, recs: list[dict]) -> None:
    """Several records of one job in one file (the sensitivity reruns), written atomically."""
    write_json(path, {"schema": "gaugelab.bundle/1", "records": recs})


def read_bundle(path: str | Path) -> list[dict]:
    """Load a bundle and validate each record in it."""
    path = Path(path)
    try:
        payload = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise RecordError(f"{path}: not valid JSON (cut short?): {exc}") from None
    if not isinstance(payload, dict) or payload.get("schema") != "gaugelab.bundle/1":
        raise RecordError(f"{path}: not a record bundle")
    out = []
    for i, record in enumerate(payload["records"]):
        validate(record, f"{path}[{i}]")
        out.append({**record, **{k: _from_json(record[k]) for k in ("train", "rec", "erank", "nuc", "bal")}})
    return out


# --- attention twins (spec: attention.md §10.5) -------------------------------------------------

TWIN_SCHEMA = "gaugelab.twin/1"
TWIN_STATUSES = ("ok", "nonfinite")
_NUM = (float, int)
_OPT = (float, int, type(None))
TWIN_REQUIRED = {
    "schema": str, "config": str, "task": str, "P": int, "L": int, "d": int, "H": int, "hd": int,
    "mlp": int, "n_ctx": int, "steps": int, "steps_done": int, "dtype": str, "device": str,
    "optimizer": str, "lr": _NUM, "lr_aux": _OPT,
    "twin": str, "init_seed": int, "twin_seed": int, "sigma": _NUM, "data_seed": int,
    "curve": list, "per_head_final": list, "acc1": _OPT, "acc2": _OPT, "val_loss1": _OPT,
    "val_loss2": _OPT, "train_loss1": _OPT, "train_loss2": _OPT,
    "status": str, "identity_exact": (bool, type(None)), "wall_s": _NUM, "env": dict,
}
TWIN_METRICS = ("acc1", "acc2", "val_loss1", "val_loss2", "train_loss1", "train_loss2")


def validate_twin(record: dict, source: str = "record") -> dict:
    """Check a twin record's fields, types and curve; raise :class:`RecordError` naming ``source``."""
    for key, kind in TWIN_REQUIRED.items():
        if key not in record:
            raise RecordError(f"{source}: missing field {key!r}")
        if isinstance(record[key], bool) and kind is not bool and bool not in _tuple(kind):
            raise RecordError(f"{source}: field {key!r} has type bool")
        if not isinstance(record[key], kind):
            raise RecordError(f"{source}: field {key!r} has type {type(record[key]).__name__}")
    if record["schema"] != TWIN_SCHEMA:
        raise RecordError(f"{source}: schema {record['schema']!r}, expected {TWIN_SCHEMA!r}")
    if record["status"] not in TWIN_STATUSES:
        raise RecordError(f"{source}: unknown status {record['status']!r}")
    curve = record["curve"]
    if not curve or any(not isinstance(p, list) or len(p) != 4 for p in curve) or curve[0][0] != 0:
        raise RecordError(f"{source}: curve must be [[step, drift, qk_mean, qk_max], ...] from step 0")
    if len(record["per_head_final"]) != record["L"] * record["H"]:
        raise RecordError(f"{source}: per_head_final needs L*H = {record['L'] * record['H']} values")
    return record


def _tuple(kind) -> tuple:
    return kind if isinstance(kind, tuple) else (kind,)


def read_twin(path: str | Path) -> dict:
    """Load and validate one twin record; nulls (non-finite values) come back as NaN."""
    path = Path(path)
    record = _load_object(path)
    validate_twin(record, str(path))
    for key in TWIN_METRICS:
        record[key] = _from_json(record[key])
    record["curve"] = [[_from_json(x) for x in point] for point in record["curve"]]
    record["per_head_final"] = [_from_json(x) for x in record["per_head_final"]]
    return record


# --- numerics provenance (gaugelab.runtime's contract) -------------------------------------------

NUMERICS_FIELDS = ("numerics", "isa", "blas", "blas_mode")


def numerics(record: dict) -> tuple:
    """The numerics mode a record was made under, as its environment states it (a record made
    before the contract existed states none: ``unstated``)."""
    env = record.get("environment", record.get("env", {}))
    return tuple(env.get(field, "unstated") for field in NUMERICS_FIELDS)


def describe(mode: tuple) -> str:
    numerics_, isa, blas, blas_mode = mode
    return f"{numerics_} (ATen {isa}, {blas} {blas_mode})"


def _label(record: dict) -> str:
    keys = ("experiment", "method", "lr", "seed") if "method" in record else ("config", "optimizer", "twin",
                                                                             "init_seed", "twin_seed")
    return " ".join(f"{k}={record.get(k)}" for k in keys)


def one_numerics(recs: list[dict], where: str) -> tuple:
    """The one numerics mode of ``recs``; records made under different modes are never mixed
    into one summary: :class:`RecordError` names each mode, its count and one of its records."""
    modes: dict[tuple, list[dict]] = {}
    for record in recs:
        modes.setdefault(numerics(record), []).append(record)
    if len(modes) > 1:
        raise RecordError(f"{where}: records made under different numerics modes: " + "; ".join(
            f"{describe(mode)}: {len(group)} (e.g. {_label(group[0])})" for mode, group in modes.items()))
    return next(iter(modes), ("unstated",) * len(NUMERICS_FIELDS))


def numerics_table(paths: list[str | Path]):
    """One row per family of records (``results/runs/<family>/...``): how many, the numerics mode
    and the CPUs that made them. Records of two modes fail here, before the comparison."""
    import pandas as pd

    families: dict[str, list[dict]] = {}
    for path in map(Path, paths):
        payload = _load_object(path)
        family = path.parts[path.parts.index("runs") + 1] if "runs" in path.parts else path.parent.name
        families.setdefault(family, []).extend(payload["records"] if "records" in payload else [payload])
    one_numerics([r for recs in families.values() for r in recs], "the comparison's records")
    rows = []
    for family, recs in families.items():
        mode = numerics(recs[0])
        cpus = sorted({str(r.get("environment", r.get("env", {})).get("cpu", {}).get("model", "unstated"))
                       for r in recs})
        rows.append({"family": family, "records": len(recs), **dict(zip(NUMERICS_FIELDS, mode)),
                     "cpu": "; ".join(cpus)})
    return pd.DataFrame(rows, columns=["family", "records", *NUMERICS_FIELDS, "cpu"])
