"""Records: every file a run leaves (one JSON file per run, bundles of runs, diagnoses), with one
JSON Schema per kind (``gaugelab/data/records/``, the record format for outside readers), one
write, one read and one error type.

A record carries its provenance (what it is, a digest of the settings that determined its
numbers, the numerics mode) and a digest of its own payload. :func:`problem` says why a file
cannot be used where a consumer expects a given record: unreadable, not the kind, edited (digest),
another run than its path names, other settings than the configuration now asked for. NaN (a
diverged run's metrics) is stored as null so the files are strict JSON.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import referencing

from . import sealed

SCHEMA = "gaugelab.run/2"
BUNDLE_SCHEMA = "gaugelab.bundle/2"
TWIN_SCHEMA = "gaugelab.twin/2"
TWIN_BUNDLE_SCHEMA = "gaugelab.twin_bundle/2"
TWIN_STEP0_SCHEMA = "gaugelab.twin_step0/1"
CONVEX_SCHEMA = "gaugelab.convex/2"
DIAGNOSE_SCHEMA = "gaugelab.diagnose/2"
MERGE_SCHEMA = "gaugelab.merge/2"
AUDIT_SCHEMA = "gaugelab.audit/1"
CENSUS_SCHEMA = "gaugelab.census/1"
# schema id -> its JSON Schema file in gaugelab/data/records/
KINDS = {SCHEMA: "run", BUNDLE_SCHEMA: "bundle", TWIN_SCHEMA: "twin", TWIN_BUNDLE_SCHEMA: "twin_bundle",
         TWIN_STEP0_SCHEMA: "twin_step0", CONVEX_SCHEMA: "convex", DIAGNOSE_SCHEMA: "diagnose", MERGE_SCHEMA: "merge",
         AUDIT_SCHEMA: "audit", CENSUS_SCHEMA: "census"}
STATUSES = ("interpolated", "budget", "diverged")
METRICS = ("train", "rec", "erank", "nuc", "bal")
TWIN_METRICS = ("acc1", "acc2", "val_loss1", "val_loss2", "train_loss1", "train_loss2")

class RecordError(ValueError):
    """A record that is missing, cut short, malformed, edited or not the one expected; the message
    names the file and the field."""


# --- schemas -------------------------------------------------------------------------------------

def _schema_file(name: str) -> dict:
    return json.loads(resources.files("gaugelab").joinpath(f"data/records/{name}.schema.json").read_text())


@cache
def _validators() -> dict[str, jsonschema.Draft202012Validator]:
    schemas = [_schema_file(name) for name in ("provenance", *KINDS.values())]
    registry = referencing.Registry().with_resources(
        (s["$id"], referencing.Resource.from_contents(s)) for s in schemas)
    by_id = {s["$id"]: s for s in schemas}
    return {kind: jsonschema.Draft202012Validator(by_id[f"urn:gaugelab:{name}"], registry=registry)
            for kind, name in KINDS.items()}


def schema_of(kind: str) -> dict:
    """The JSON Schema of a record kind (e.g. ``gaugelab.run/2``)."""
    return _validators()[kind].schema


def _where(error: jsonschema.ValidationError) -> str:
    return "/".join(str(p) for p in error.absolute_path) or "(top level)"


def validate(record: Any, source: str = "record", kind: str | None = None) -> dict:
    """Check a record (as stored: nulls, not NaN) against its kind's schema and the rules a schema
    cannot state; raise :class:`RecordError` naming ``source`` and the field."""
    if not isinstance(record, dict):
        raise RecordError(f"{source}: not a JSON object")
    found = record.get("schema")
    if found not in KINDS:
        raise RecordError(f"{source}: field 'schema' is {found!r}, not a gaugelab record kind "
                          f"({', '.join(KINDS)})")
    if kind is not None and found != kind:
        raise RecordError(f"{source}: a {found} record where a {kind} record is expected")
    error = jsonschema.exceptions.best_match(_validators()[found].iter_errors(record))
    if error is not None:
        raise RecordError(f"{source}: field {_where(error)}: {error.message}")
    for i, member in enumerate(record.get("records", [])):
        _check_shape(member, f"{source}[{i}]")
    _check_shape(record, source)
    return record


def _check_shape(record: dict, source: str) -> None:
    if record["schema"] == SCHEMA and len(record["curve"]["step"]) != len(record["curve"]["loss"]):
        raise RecordError(f"{source}: field curve: 'step' and 'loss' differ in length")
    if record["schema"] == TWIN_SCHEMA:
        if record["curve"][0][0] != 0:
            raise RecordError(f"{source}: field curve: must start at step 0")
        if len(record["per_head_final"]) != record["L"] * record["H"]:
            raise RecordError(f"{source}: field per_head_final: needs L*H = {record['L'] * record['H']} values")


# --- digests and provenance ----------------------------------------------------------------------

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


def _canonical(value: Any) -> bytes:
    return json.dumps(_to_json(value), sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def _sha256(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def settings_digest(settings: dict) -> str:
    """The digest of every setting that determines a record's numbers (canonical JSON), so two
    records with the same digest and identity were made by the same computation. The revision of
    the engine's elementwise math (:data:`gaugelab.core.portable.REVISION`) is one of them."""
    from . import portable

    return _sha256(_canonical({**settings, "elementwise_math": portable.REVISION}))


def provenance(what: dict, settings: dict, numerics: str | None = None) -> dict:
    """A record's provenance: its identity, its settings' digest and the numerics mode (default:
    the one in effect, as records name it: :func:`gaugelab.core.runtime.recorded_mode`). The workflow
    computes the same from the configuration to check a record it finds."""
    from . import runtime

    return {"what": _to_json(dict(what)), "settings": settings_digest(settings),
            "numerics": numerics or runtime.recorded_mode()}


def digest_of(payload: dict) -> str:
    """The digest of a record's payload: its canonical JSON without the ``digest`` field."""
    return _sha256(_canonical({k: v for k, v in payload.items() if k != "digest"}))


def _stamped(payload: dict) -> dict:
    """``payload`` as stored: nulls for non-finite numbers, members of a bundle and the whole
    stamped with their digests."""
    payload = _to_json(payload)
    if payload.get("schema") in KINDS:
        if isinstance(payload.get("records"), list):
            payload["records"] = [_stamped(r) for r in payload["records"]]
        payload["digest"] = digest_of(payload)
    return payload


# --- one write, one read -------------------------------------------------------------------------

def write_json(path: str | Path, payload: dict) -> None:
    """Write a record (stamped with its digest, and checked against its schema) or any JSON
    object to a temporary file in the same folder, then rename: readers never see half a file."""
    path = Path(path)
    payload = _stamped(payload)
    if payload.get("schema") in KINDS:
        validate(payload, f"{path} (being written)")
    text = json.dumps(payload, indent=1, sort_keys=True, allow_nan=False) + "\n"
    sealed.write_atomic(path, text)


def _load_object(path: Path) -> dict:
    """The JSON object in ``path``, or a RecordError saying what is wrong with the file."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise RecordError(f"{path}: no such record") from None
    except OSError as exc:
        raise RecordError(f"{path}: cannot be read: {exc.strerror}") from None
    try:
        record = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise RecordError(f"{path}: not UTF-8 text (byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise RecordError(f"{path}: not valid JSON (cut short?): {exc}") from None
    if not isinstance(record, dict):
        raise RecordError(f"{path}: not a JSON object")
    return record


def load(path: str | Path, kind: str | None = None) -> dict:
    """The one read: parse, check the schema (``kind`` if given) and the payload digest. Values
    come back as stored (null for non-finite numbers)."""
    path = Path(path)
    record = validate(_load_object(path), str(path), kind)
    if record["digest"] != digest_of(record):
        raise RecordError(f"{path}: field digest: does not match the payload (edited after it was written)")
    for i, member in enumerate(record.get("records", [])):
        if member["digest"] != digest_of(member):
            raise RecordError(f"{path}[{i}]: field digest: does not match the payload (edited after it was written)")
    return record


def _run_values(record: dict) -> dict:
    return {**record, **{k: _from_json(record[k]) for k in METRICS}}


def _twin_values(record: dict) -> dict:
    return {**record, **{k: _from_json(record[k]) for k in TWIN_METRICS},
            "curve": [[_from_json(x) for x in point] for point in record["curve"]],
            "per_head_final": [_from_json(x) for x in record["per_head_final"]]}


def read(path: str | Path) -> dict:
    """One sensing (or dial) run record; NaN comes back for the nulls of the metric fields."""
    return _run_values(load(path, SCHEMA))


def read_bundle(path: str | Path) -> list[dict]:
    """The run records of a sensitivity bundle."""
    return [_run_values(r) for r in load(path, BUNDLE_SCHEMA)["records"]]


def write_bundle(path: str | Path, recs: list[dict], what: dict, settings: dict) -> None:
    """Several run records of one job in one file (the sensitivity reruns), written atomically."""
    write_json(path, {"schema": BUNDLE_SCHEMA, "records": recs, "provenance": provenance(what, settings)})


def read_twin(path: str | Path) -> dict:
    """One twin-pair record; nulls (non-finite values) come back as NaN."""
    return _twin_values(load(path, TWIN_SCHEMA))


def read_twin_bundle(path: str | Path) -> list[dict]:
    """The twin records of a Table 9 step-1 bundle."""
    return [_twin_values(r) for r in load(path, TWIN_BUNDLE_SCHEMA)["records"]]


def read_twin_step0(path: str | Path, expected: dict) -> dict:
    """A step-0 record of the float64 twins whose provenance must be ``expected``; its points'
    nulls come back as NaN. One that cannot be used is a :class:`RecordError` naming it."""
    path = Path(path)
    record = load(path, TWIN_STEP0_SCHEMA)  # a missing file: "no such record"
    reason = _not_a_file(path) or _provenance_problem(path, record, expected)
    if reason is not None:
        raise RecordError(reason)
    return {**record, "points": [{**p, "point": [_from_json(x) for x in p["point"]]} for p in record["points"]]}


# --- what a consumer checks ----------------------------------------------------------------------

def _differences(found: Any, expected: Any, where: str) -> list[str]:
    if isinstance(found, dict) and isinstance(expected, dict):
        out = []
        for key in sorted(set(found) | set(expected)):
            out += _differences(found.get(key), expected.get(key), f"{where}.{key}")
        return out
    return [] if found == expected else [f"{where} is {found!r}, expected {expected!r}"]


def problem(path: str | Path, kind: str, expected: dict | None = None) -> str | None:
    """Why the file at ``path`` cannot be used as the ``kind`` record whose provenance should be
    ``expected`` (see :func:`provenance`), or None when it can. A missing file is no problem
    here: its job simply runs."""
    path = Path(path)
    odd = _not_a_file(path)
    if odd is not None:
        return odd
    if not path.exists():
        return None
    if kind == SEALED:
        return sealed.problem(path)
    try:
        record = load(path, kind)
    except RecordError as exc:
        return str(exc)
    return None if expected is None else _provenance_problem(path, record, expected)


def _provenance_problem(path: Path, record: dict, expected: dict) -> str | None:
    """Why a loaded record is not the one whose provenance should be ``expected``, or None."""
    found = record["provenance"]
    if found["numerics"] != expected["numerics"]:
        return (f"{path}: made under numerics mode {found['numerics']!r}, "
                f"{expected['numerics']!r} is in effect")
    wrong = _differences(found["what"], expected["what"], "provenance.what")
    if wrong:
        return f"{path}: another run than its path names: {'; '.join(wrong)}"
    if found["settings"] != expected["settings"]:
        return f"{path}: made with other settings than the configuration now asks for (provenance.settings differs)"
    return None


# --- intermediate tables (summaries, parts of the comparison): sealed files ----------------------

SEALED = "sealed"  # the kind :func:`problem` checks a sealed file (a table or product) as


def write_table(frame, path: str | Path, **to_csv) -> None:
    """Write an intermediate CSV as a sealed file (gaugelab.core.sealed), so a file cut short, edited
    or copied from another experiment is found before anything is built from it."""
    sealed.write(path, frame.to_csv(index=False, **to_csv))


def read_table(path: str | Path, **read_csv):
    """Read an intermediate CSV written by :func:`write_table`; one that is not the sealed file
    made for its path is a :class:`RecordError` naming it."""
    import pandas as pd

    reason = sealed.problem(path)
    if reason:
        raise RecordError(reason)
    return pd.read_csv(path, **read_csv)


def is_valid(path: str | Path, kind: str = SCHEMA) -> bool:
    """Whether ``path`` holds a readable, unedited ``kind`` record."""
    return Path(path).exists() and problem(path, kind) is None


def _not_a_file(path: Path) -> str | None:
    """What is at ``path`` if it is there but not a regular file of its own (records and tables
    are): a symbolic link, a folder or something else."""
    if path.is_symlink():
        return f"{path}: a symbolic link (to {os.readlink(path)}), not a file of its own"
    if path.is_dir():
        return f"{path}: a folder, not a file"
    if path.exists() and not path.is_file():
        return f"{path}: not a regular file"
    return None


def raw_digest(path: str | Path) -> str:
    """The digest of a file's bytes (what the workflow names a set-aside file by); of what the
    file system says of it where there are no bytes to read (a link, a folder, an unreadable file)."""
    path = Path(path)
    if _not_a_file(path) is None:
        try:
            return hashlib.sha256(path.read_bytes()).hexdigest()[:12]
        except OSError:
            pass
    st = path.lstat()
    link = os.readlink(path) if path.is_symlink() else ""
    return hashlib.sha256(f"{st.st_mode}:{link}:{st.st_size}:{st.st_mtime_ns}".encode()).hexdigest()[:12]

# --- numerics provenance (gaugelab.core.runtime's contract) -------------------------------------------

NUMERICS_FIELDS = ("numerics", "isa", "blas", "blas_mode")


def numerics(record: dict) -> tuple:
    """The numerics mode a record was made under, as its environment states it (a record made
    before the contract existed states none: ``unstated``)."""
    env = record.get("environment", record.get("env", {}))
    return tuple(env.get(field, "unstated") for field in NUMERICS_FIELDS)


def describe(mode: tuple) -> str:
    """``native (ATen AVX512, MKL 2024.2 AUTO)``; a BLAS without a reproducibility mode states none."""
    numerics_, isa, blas, blas_mode = mode
    stated = [str(x) for x in (blas, blas_mode) if x is not None and str(x) not in ("", "nan", "None")]
    return f"{numerics_} (ATen {isa}, {' '.join(stated)})"


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
        payload = load(path)
        family = path.parts[path.parts.index("runs") + 1] if "runs" in path.parts else path.parent.name
        families.setdefault(family, []).extend(payload["records"] if "records" in payload else [payload])
    one_numerics([r for recs in families.values() for r in recs], "the comparison's records")
    rows = []
    for family, recs in families.items():
        if not recs:  # only empty bundles (no cell to rerun), every run read from another family
            continue
        mode = numerics(recs[0])
        cpus = sorted({str(r.get("environment", r.get("env", {})).get("cpu", {}).get("model", "unstated"))
                       for r in recs})
        rows.append({"family": family, "records": len(recs), **dict(zip(NUMERICS_FIELDS, mode)),
                     "cpu": "; ".join(cpus)})
    return pd.DataFrame(rows, columns=["family", "records", *NUMERICS_FIELDS, "cpu"])
