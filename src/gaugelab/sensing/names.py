"""Names of sensing experiments and their arms, built from numbers: one spelling of a value in a
name, so that an arm's name, its config check and its results folder agree."""

from __future__ import annotations


def value_tag(value: float) -> str:
    """A number as a name fragment (6 significant digits): 0.003 -> '0p003', 0 -> '0', 1e-05 -> '1em05'."""
    return f"{value:g}".replace(".", "p").replace("-", "m").replace("+", "")
