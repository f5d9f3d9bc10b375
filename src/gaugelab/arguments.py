"""The command line's arguments, checked before any run: argparse value types (a bad value is
argparse's one-line usage error), the configuration file, and the output paths (a bad path does
not cost the run)."""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path

from . import configuration
from .core import config as core_config, runtime


class UsageError(SystemExit):
    """A user error the command finds itself: :func:`main` prints ``gaugelab: <message>`` and the
    process exits 2, as argparse's usage errors do; from Python the message is the exception's text."""

    def __init__(self, message: str):
        super().__init__(message)
        self.code = 2


# --- argument types: argparse refuses a bad value itself, with a one-line usage error -------------

def checked_value(kind, text: str, ok, what: str):
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not ok(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not {what}")
    return value


def positive_int(text: str) -> int:
    return checked_value(int, text, lambda v: v >= 1, "a positive integer")


def seed(text: str) -> int:
    """A seed within the schema's range ($defs/seed: what the generators take, and int64)."""
    top = core_config.schema()["$defs"]["seed"]["maximum"]
    return checked_value(int, text, lambda v: 0 <= v <= top, f"a seed (an integer from 0 to {top})")


def positive_float(text: str) -> float:
    """A finite number above 0 (float() takes 'nan' and 'inf', which no rate or scale may be)."""
    return checked_value(float, text, lambda v: math.isfinite(v) and v > 0, "a positive finite number")


def unit_interval(text: str) -> float:
    return checked_value(float, text, lambda v: 0 <= v <= 1, "a number in [0, 1]")


def finite_float(text: str) -> float:
    return checked_value(float, text, math.isfinite, "a finite number")


def config_file(path: str | None) -> dict:
    """The configuration file's settings, the schema's defaults filled in. Its ``numerics`` key,
    where set, must be this process's mode: the mode is fixed before torch's first arithmetic, so
    the command line takes it from GAUGELAB_NUMERICS (docs/numerics.md)."""
    cfg = configuration.load(path)
    wanted, running = cfg.get("numerics"), runtime.mode()
    if wanted not in (None, running):
        raise UsageError(f"--config {path}: numerics: {wanted!r}, but this command runs {running!r}; "
                         f"run it with GAUGELAB_NUMERICS={wanted}")
    return cfg


# --- outputs: checked before any training, so a bad path does not cost the run ------------------

def writable_folder(folder: Path, flag: str, given: str) -> None:
    """The nearest existing folder at or above ``folder`` must be a folder this process can write
    in (records.write_json creates the missing ones below it)."""
    existing = folder
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise UsageError(f"{flag} {given}: {existing} is not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"{flag} {given}: cannot write in {existing}")


def output_path(path: str, flag: str = "-o") -> None:
    """A record's path: a new or regular file (the record replaces it by a rename, which would put
    a plain file in place of a device such as /dev/null)."""
    target = Path(path)
    if target.is_dir():
        raise UsageError(f"{flag} {path} is a folder; name the record's file")
    if target.exists() and not target.is_file():
        raise UsageError(f"{flag} {path} is not a regular file")
    writable_folder(target.parent, flag, path)
