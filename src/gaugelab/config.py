"""Configuration: the JSON schema is the single source of defaults and of what a valid key is.

The workflow (rules/common.smk) and the command line validate through :func:`validate`, so a
misspelled key, an unknown method or a negative learning rate fails the same way everywhere,
naming the key, before any run starts.
"""

from __future__ import annotations

import copy
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


def _with_defaults(validator_class):
    validate_properties = validator_class.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, schema_):
        if isinstance(instance, dict):
            for key, sub in properties.items():
                if "default" in sub and key not in instance:
                    instance[key] = copy.deepcopy(sub["default"])
        yield from validate_properties(validator, properties, instance, schema_)

    return jsonschema.validators.extend(validator_class, {"properties": set_defaults})


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
