"""Configuration: the JSON schema is the single source of defaults and of what a valid key is.

The workflow (rules/common.smk) and the command line validate through :func:`validate`, so a
misspelled key, an unknown method or a negative learning rate fails the same way everywhere,
naming the key, before any run starts.
"""

from __future__ import annotations

import copy
import math
from functools import cache
from importlib import resources
from pathlib import Path

import jsonschema
import yaml


class ConfigError(ValueError):
    """A configuration that does not match the schema."""


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

    def finite_type(validator, types, instance, schema_):
        if isinstance(instance, float) and not math.isfinite(instance):
            yield jsonschema.ValidationError(f"{instance!r} is not a finite number")
            return
        yield from validate_type(validator, types, instance, schema_)

    return jsonschema.validators.extend(validator_class, {
        "properties": properties, "additionalProperties": additional, "items": items, "type": finite_type})


_Validator = _with_defaults(jsonschema.Draft202012Validator)


def _where(error: jsonschema.ValidationError) -> str:
    return "/".join(str(part) for part in error.absolute_path) or "(top level)"


def validate(config: dict) -> dict:
    """Fill defaults in place and check ``config``; raise :class:`ConfigError` naming the key."""
    errors = sorted(_Validator(schema()).iter_errors(config), key=lambda e: list(e.absolute_path))
    if errors:
        lines = [f"config key {_where(e)}: {e.message}" for e in errors]
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(lines))
    return config


def load(path: str | Path | None = None) -> dict:
    """Read a YAML config (or none: the paper's defaults) and validate it."""
    config = {} if path is None else (yaml.safe_load(Path(path).read_text()) or {})
    return validate(config)
