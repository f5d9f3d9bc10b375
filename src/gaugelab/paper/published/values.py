"""A published value: what the paper states, where, and what it is held to.

A value's ``kind`` says how it is checked (compare.judge):

- ``abs``: a number as printed; it agrees when it is within ``tolerance`` of it. The tolerance of
  a printed number is one unit in its last printed digit (:func:`unit`): half a unit for the
  paper's rounding and half for this reproduction's. Counts and yes/no claims have tolerance 0.
- ``decades``: an order of magnitude, |log10(reproduced / value)| <= tolerance (float round-off
  and chaotic values, whose digits carry no information).
- ``at_least`` / ``at_most``: a bound, reproduced >= / <= tolerance.
- ``between``: a bound, tolerance <= reproduced <= upper.

Only ``abs`` values can be ``exact``; the others are bounds, ``within bound`` at best.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

BOUNDS = ("decades", "at_least", "at_most", "between")


@dataclass(frozen=True)
class Value:
    source: str       # table, figure or section of the paper
    row: str          # method or quantity group (internal label; the report shows display names)
    quantity: str     # lr, rec, erank, count, gap, drift_<step>, ...
    value: float
    tolerance: float  # read as ``kind`` says
    printed: str      # as the paper prints it
    kind: str = "abs"
    where: str = ""   # where it is stated: the table, figure, sentence or released log
    why: str = ""     # why this tolerance or bound
    upper: float = math.nan   # ``between``: the upper bound
    target: str = "default"   # the workflow target whose records it needs ("gpu": `snakemake gpu`)

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.source, self.row, self.quantity)

    @property
    def is_bound(self) -> bool:
        return self.kind in BOUNDS


def unit(printed: str) -> float:
    """One unit in the last printed digit of the leading number: '0.1312' -> 1e-4, '3.6e-3' -> 1e-4,
    '11e-3' -> 1e-3, '56%' -> 0.01, '93x' -> 1, '0.3179 (floor)' -> 1e-4."""
    number = re.match(r"\s*[-+]?(\d*)(?:\.(\d*))?(?:[eE]([-+]?\d+))?\s*(%?)", printed)
    if number is None or not (number[1] or number[2]):
        raise ValueError(f"no printed number in {printed!r}")
    scale = 0.01 if number[4] else 1.0
    return scale * 10.0 ** (int(number[3] or 0) - len(number[2] or ""))


def printed_value(source, row, quantity, value, printed, where, why="printed precision (one unit in the last digit)",
                  **kw) -> Value:
    """A number held to its printed precision."""
    return Value(source, row, quantity, value, unit(printed), printed, "abs", where, why, **kw)


def claim(source, row, quantity, printed, where, why, holds: bool = True, **kw) -> Value:
    """A yes/no claim (1 = it holds as the paper states it)."""
    return Value(source, row, quantity, 1.0 if holds else 0.0, 0.0, printed, "abs", where, why, **kw)


def count(source, row, quantity, value, printed, where, why="a count: must be equal", **kw) -> Value:
    return Value(source, row, quantity, value, 0.0, printed, "abs", where, why, **kw)
