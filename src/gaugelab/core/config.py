"""Configuration: the JSON schema is the single source of defaults and of what a valid key is.

The workflow (rules/common.smk) and the command line validate through
:func:`gaugelab.configuration.validate`, so a misspelled key, an unknown method or a negative
learning rate fails the same way everywhere, naming the key, before any run starts. What one key's
schema cannot say (rank at most n, d a multiple of the heads, checkpoints within the steps) is
checked after it (:func:`cross_field_errors`) and reported in the same message; the rules that need
the experiments (output names, the diagnostic's optimizers) are passed in from above.
"""

from __future__ import annotations

import copy
import json
import math
from functools import cache
from importlib import resources
from pathlib import Path

import jsonschema
import yaml


# The most entries a sensing testbed's measurement operator A (m x n^2) may hold: the schema's
# $defs/sensing_size says why.
MAX_OPERATOR = 2**28


class ConfigError(ValueError):
    """A configuration that does not match the schema; ``errors`` holds one line per problem."""

    def __init__(self, errors: list[str], heading: str = "invalid configuration"):
        super().__init__(f"{heading}:\n  " + "\n  ".join(errors))
        self.errors, self.heading = errors, heading

    def __reduce__(self):  # pickles (a worker process's error) as it was built
        return type(self), (self.errors, self.heading)


@cache
def schema() -> dict:
    return yaml.safe_load(resources.files("gaugelab").joinpath("data/config.schema.yaml").read_text())


def _resolve(sub: dict) -> dict:
    """A subschema with its local ``$ref`` (``#/$defs/name``, the only kind the schema uses) followed."""
    while "$ref" in sub:
        sub = schema()["$defs"][sub["$ref"].rsplit("/", 1)[1]]
    return sub


def _coerce(value, sub: dict):
    """A value as the schema's type means it: command-line ``--config`` values arrive as strings
    (Snakemake parses lists and mappings but leaves their scalars as text), and a count written as
    an integer-valued float (``1.0e+4``) is that integer. Anything else is left for the
    validator to refuse."""
    kind = _resolve(sub).get("type") if isinstance(sub, dict) else None
    if isinstance(value, str) and kind in ("integer", "number", "boolean"):
        text = value.strip()
        try:
            if kind == "boolean" and text.lower() in ("true", "false"):
                return text.lower() == "true"
            if kind == "number":
                return float(text)
            if kind == "integer":
                value = float(text) if any(c in text for c in ".eE") else int(text)
        except ValueError:
            return value
    if kind == "integer" and isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return value


def _with_defaults(validator_class):
    """The schema's validator, extended: defaults filled in, values coerced to the schema's types
    (:func:`_coerce`), and numbers required to be finite (YAML's .nan and .inf are numbers to
    JSON Schema)."""
    validate_properties = validator_class.VALIDATORS["properties"]
    validate_additional = validator_class.VALIDATORS["additionalProperties"]
    validate_items = validator_class.VALIDATORS["items"]
    validate_type = validator_class.VALIDATORS["type"]
    validate_unique = validator_class.VALIDATORS["uniqueItems"]

    def properties(validator, props, instance, schema_):
        if isinstance(instance, dict):
            for key, sub in props.items():
                if "default" in sub and key not in instance:
                    instance[key] = copy.deepcopy(sub["default"])
                if key in instance:
                    instance[key] = _coerce(instance[key], sub)
        yield from validate_properties(validator, props, instance, schema_)

    def additional(validator, extra, instance, schema_):
        if isinstance(instance, dict) and isinstance(extra, dict):
            for key in instance:
                if key not in schema_.get("properties", {}):
                    instance[key] = _coerce(instance[key], extra)
        yield from validate_additional(validator, extra, instance, schema_)

    def items(validator, sub, instance, schema_):
        if isinstance(instance, list) and isinstance(sub, dict):
            instance[:] = [_coerce(value, sub) for value in instance]
        yield from validate_items(validator, sub, instance, schema_)

    def unique(validator, unique_items, instance, schema_):
        """Items compared as the schema's types make them (``--config seeds='[42, 042]'`` is
        ['42', '042'], two seeds 42), the first repeat named: an item of a seed or lr list is an
        output path of its own, and two alike would be one output made twice."""
        if not (unique_items and isinstance(instance, list)):
            return
        if isinstance(schema_.get("items"), dict):
            instance[:] = [_coerce(value, schema_["items"]) for value in instance]
        for i, value in enumerate(instance):
            first = next((j for j, earlier in enumerate(instance[:i]) if _same(value, earlier)), None)
            if first is not None:
                yield jsonschema.ValidationError(f"{value!r} is listed twice (items {first} and {i})")
                return
        yield from validate_unique(validator, unique_items, instance, schema_)

    def finite_type(validator, types, instance, schema_):
        if isinstance(instance, float) and not math.isfinite(instance):
            yield jsonschema.ValidationError(f"{instance!r} is not a finite number")
            return
        yield from validate_type(validator, types, instance, schema_)

    return jsonschema.validators.extend(validator_class, {
        "properties": properties, "additionalProperties": additional, "items": items, "type": finite_type,
        "uniqueItems": unique})


def _same(a, b) -> bool:
    """Equal as JSON Schema's uniqueItems means it (1 == 1.0, but True is not 1)."""
    return isinstance(a, bool) == isinstance(b, bool) and a == b


_Validator = _with_defaults(jsonschema.Draft202012Validator)


def _where(error: jsonschema.ValidationError) -> str:
    return "/".join(str(part) for part in error.absolute_path) or "(top level)"


def _is_int(*values) -> bool:
    return all(isinstance(v, int) and not isinstance(v, bool) for v in values)


def is_number(*values) -> bool:
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def _sizes(get, where: str, per_dof_from: str | None = None):
    """A sensing testbed's sizes: X* is n x n of rank r*, U Vᵀ of width k must reach it, and
    m = int(measurements_per_dof * r*(2n - r*)) must be at least one. ``per_dof_from``: the block
    whose measurements_per_dof applies (second_size takes the zoo's)."""
    n, rank, width = get(f"{where}/n"), get(f"{where}/rank"), get(f"{where}/width")
    per_dof_at = f"{per_dof_from or where}/measurements_per_dof"
    per_dof = get(per_dof_at)
    if not _is_int(n, rank, width):
        return
    if rank > n:
        yield f"{where}/rank", f"planted rank {rank} exceeds n = {n} (X* is n x n)"
    elif width < rank:
        yield f"{where}/width", (f"factor width {width} is below the planted rank {rank}: U Vᵀ cannot reach X* "
                                 "(the testbed is over-parameterised, k >= r*)")
    elif is_number(per_dof) and int(per_dof * rank * (2 * n - rank)) < 1:
        yield per_dof_at, f"m = int({per_dof:g} x r*(2n - r*)) is 0 measurements at {where}'s n = {n}, r* = {rank}"
    elif is_number(per_dof) and int(per_dof * rank * (2 * n - rank)) * n * n > MAX_OPERATOR:
        m = int(per_dof * rank * (2 * n - rank))
        yield f"{where}/n", (f"the measurement operator A would be m x n^2 = {m} x {n * n}, {m * n * n:.2e} entries, "
                             f"above the ceiling of 2^28 ({MAX_OPERATOR}; 1 GiB in float32, the schema's sensing_size)")


DEVICE_KEYS = ("device", "table9/device", "table9/step1_device", "ladder/device", "dial_gpu/device",
               "phase_fine/device")


def _devices(get):
    """A device this machine lacks fails every job that uses it: refuse it here. Imports torch
    only when a key asks for cuda; auto (CUDA where present) is always fine."""
    wanted = [key for key in DEVICE_KEYS if get(key) == "cuda"]
    if not wanted:
        return
    import torch

    if not torch.cuda.is_available():
        for key in wanted:
            yield key, ("cuda, but torch finds no CUDA device on this machine (torch.cuda.is_available() is False); "
                        "use cpu, or auto (CUDA where present)")


def _heads(get, where: str, heads_key: str):
    d, heads = get(f"{where}/d"), get(f"{where}/{heads_key}")
    if _is_int(d, heads) and heads and d % heads:
        yield f"{where}/d", f"d = {d} is not a multiple of {heads_key} = {heads} (each head is d/{heads_key} wide)"


def _checkpoints(get):
    """Checkpoints past the step budget would be dropped without a word (Table 3 would lose its
    columns and show the last step instead)."""
    steps, marks = get("twins/steps"), get("twins/checkpoints")
    if _is_int(steps) and isinstance(marks, list):
        late = [c for c in marks if _is_int(c) and c > steps]
        if late:
            yield "twins/checkpoints", (f"{late} lie beyond steps = {steps}; list the checkpoints up to the "
                                        "step budget (step 0 and the last step are always added)")


def cross_field_errors(config: dict, refused: set[str] = frozenset(), checks=()) -> list[tuple[str, str]]:
    """(key path, message) for each rule that spans keys. A key the schema ``refused`` (a path,
    or one above or below it) is not read: its value may be of any type. ``checks``: more such
    rules, each a function of ``get`` (a key path's value, None where refused) yielding (key path,
    message); the ones that need the experiments come from :mod:`gaugelab.configuration`."""
    def get(path: str):
        if any(path == r or path.startswith(f"{r}/") or r.startswith(f"{path}/") for r in refused):
            return None
        value = config
        for part in path.split("/"):
            value = value.get(part) if isinstance(value, dict) else None
        return value

    return [*_sizes(get, "zoo"), *_sizes(get, "second_size", "zoo"), *_sizes(get, "dial"),
            *_sizes(get, "diagnose/sensing"), *_heads(get, "diagnose/attention", "n_head"),
            *_heads(get, "twins", "H"), *_checkpoints(get), *_devices(get),
            *(error for check in checks for error in check(get))]


def validate(config: dict, checks=()) -> dict:
    """Fill defaults in place and check ``config``; raise :class:`ConfigError` naming the key.
    ``checks``: the cross-field rules of the layers above (:func:`cross_field_errors`)."""
    errors = sorted(_Validator(schema()).iter_errors(config), key=lambda e: list(e.absolute_path))
    lines = [f"config key {_where(e)}: {e.message}" for e in errors]
    if isinstance(config, dict):
        refused = {_where(e) for e in errors}
        lines += [f"config key {where}: {message}" for where, message in cross_field_errors(config, refused, checks)]
    if lines:
        raise ConfigError(lines)
    return config


def yaml_problem(exc: yaml.YAMLError) -> str:
    """A YAML error in one line (PyYAML's own text spans several, with the offending snippet)."""
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    return f"{getattr(exc, 'problem', None) or type(exc).__name__}{where}"


def _twice(node, where: tuple[str, ...] = ()):
    """(key path, line, first line) of each mapping key given twice in a composed YAML document:
    PyYAML, and so Snakemake, keeps the last without a word."""
    if isinstance(node, yaml.MappingNode):
        seen = {}
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
                continue
            line = key.start_mark.line + 1
            if key.value in seen:
                yield "/".join((*where, key.value)), line, seen[key.value]
            seen.setdefault(key.value, line)
            yield from _twice(value, (*where, key.value))
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            yield from _twice(item, (*where, str(i)))


def _json_pairs(path):
    def pairs(items):
        keys = [key for key, _ in items]
        again = next((key for i, key in enumerate(keys) if key in keys[:i]), None)
        if again is not None:
            raise ConfigError([f"{path}: key {again!r} is given twice; JSON keeps the last without a word"],
                              "the configuration gives a key twice")
        return dict(items)
    return pairs


def read(path: str | Path):
    """A config file's content, read as Snakemake reads it (JSON, else YAML) but strictly: a file
    that cannot be read, is not UTF-8, does not parse or gives a key twice is a
    :class:`ConfigError` naming the file (and the key, the line)."""
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except OSError as exc:
        raise ConfigError([f"{path}: {exc.strerror or exc}"], "cannot read the configuration") from None
    except UnicodeDecodeError as exc:
        raise ConfigError([f"{path}: not UTF-8 (byte 0x{exc.object[exc.start]:02x} at offset {exc.start}); "
                           "save it as UTF-8"], "cannot read the configuration") from None
    try:
        return json.loads(text, object_pairs_hook=_json_pairs(path))
    except json.JSONDecodeError:
        pass
    try:
        twice = [f"{path}: key {key} is given twice (lines {first} and {line}); YAML keeps the last without a word"
                 for key, line, first in _twice(yaml.compose(text, Loader=yaml.SafeLoader))]
        if twice:
            raise ConfigError(twice, "the configuration gives a key twice")
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError([f"{path}: {yaml_problem(exc)}"], "the configuration is not valid YAML") from None


def load(path: str | Path | None = None, checks=()) -> dict:
    """Read a YAML config (or none: the paper's defaults) and validate it. A file that cannot be
    read or parsed (:func:`read`), or holds something else than keys (``0``, ``false``, ``[]``:
    not the defaults), is a :class:`ConfigError` naming it; an empty file is the defaults."""
    if path is None:
        return validate({}, checks)
    config = read(path)
    if config is None:
        config = {}
    if not isinstance(config, dict):
        raise ConfigError([f"{path}: holds {config!r}, not keys and values (an empty file is the defaults)"],
                          "the configuration is not a mapping")
    return validate(config, checks)
