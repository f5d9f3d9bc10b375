"""The paper's published numbers and claims, each with where it appears and what it is held to.

This package is the only place in the project where a published value is written down, by the
paper's sections (sensing: Sections 5 and 7; attention: Section 6 and Table 9), each value as
published.values says. Tables never read from here; the comparison does (spec: sensing.md §16,
attention.md §12), and the figures draw the values as markers beside the reproduced ones
(figures.*_published).
"""

from __future__ import annotations

from .attention import *  # noqa: F401,F403
from .attention import table9, twins
from .sensing import *  # noqa: F401,F403
from .sensing import DIAL, LADDER, SECTION8, SIGNUM_AUDIT, controls, table2
from .values import BOUNDS, Value, claim, count, printed_value, unit  # noqa: F401

def every() -> list[Value]:
    return table2() + controls() + SIGNUM_AUDIT + LADDER + DIAL + SECTION8 + twins() + table9()


SECTIONS = {  # source -> the paper section it belongs to, for the report's grouping
    "Table 2": "Section 5", "Section 5 60x60": "Section 5", "Section 5 60x60 log": "Section 5",
    "App. D.4": "Section 5", "App. D.2": "Section 5",
    "Table 6": "Section 5", "App. D.7": "Section 5", "App. D.10": "Section 5", "Table 11": "Section 5",
    "Table 3": "Section 6", "Section 6": "Section 6", "Figure 2": "Section 6", "Figure 2 reference log": "Section 6",
    "Appendix D.5": "Section 6", "Table 9": "Section 6",
    "Section 7 dial": "Section 7",
    "Section 8": "Section 8",
}


def section(source: str) -> str:
    return SECTIONS[source]


def lookup(source: str, row: str, quantity: str) -> Value:
    for value in every():
        if value.key == (source, row, quantity):
            return value
    raise KeyError(f"no published value {source}:{row}:{quantity}")


def of(source: str) -> list[Value]:
    """Every published value of one source (table, figure, log), in order: what a figure marks."""
    return [value for value in every() if value.source == source]
