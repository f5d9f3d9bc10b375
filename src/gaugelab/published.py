"""The paper's published numbers, each with where it appears and the tolerance it is held to.

This is the only place in the project where a published value is written down. Tables and
figures never read from here; only the comparison does (spec: sensing.md §16).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Value:
    source: str       # table or figure of the paper
    row: str          # method or quantity group
    quantity: str     # lr, rec, erank, count, gap, ...
    value: float
    tolerance: float  # absolute; 0 means "must be equal"
    printed: str      # as the paper prints it

    @property
    def key(self) -> str:
        return f"{self.source}:{self.row}:{self.quantity}"


REC_TOL, MUON_REC_TOL, ERANK_TOL = 5e-4, 1e-4, 0.02

_TABLE2 = [  # method, lr*, rec, printed rec, erank
    ("muon", 0.1, 6.8e-6, "0.0000", 2.95),
    ("gd", 0.01, 0.1312, "0.1312", 4.51),
    ("scalar_adam", 1e-3, 0.2010, "0.2010", 5.43),
    ("shampoo", 0.03, 0.2856, "0.2856", 6.95),
    ("lion", 3e-4, 0.4248, "0.4248", 10.58),
    ("signum", 3e-3, 0.4454, "0.4454", 7.83),
    ("rmsprop", 1e-4, 0.5266, "0.5266", 12.80),
    ("adafactor", 3e-4, 0.5430, "0.5430", 10.72),
    ("adam", 0.01, 0.5734, "0.5734", 14.37),
]

TABLE2: list[Value] = []
for _method, _lr, _rec, _printed, _erank in _TABLE2:
    TABLE2 += [
        Value("Table 2", _method, "lr", _lr, 0.0, f"{_lr:g}"),
        Value("Table 2", _method, "rec", _rec, MUON_REC_TOL if _method == "muon" else REC_TOL, _printed),
        Value("Table 2", _method, "erank", _erank, ERANK_TOL, f"{_erank:.2f}"),
    ]

TABLE2_SPLIT: list[Value] = [
    Value("Table 2", "clean split", "count", 9, 0.0, "9/9"),
    Value("Table 2", "clean split", "gap", 0.139, 5e-4, "0.139"),
    Value("Table 2", "rank split", "count", 8, 0.0, "8/9"),
]


DIAL: list[Value] = [  # Section 7, arm A (the per-p tuned envelope); rows are dial.label()s
    Value("Section 7 dial", "p1", "rec", 0.5704, REC_TOL, "0.5704"),
    Value("Section 7 dial", "p1", "erank", 14.5, ERANK_TOL, "14.5"),
    Value("Section 7 dial", "rms_p0", "rec", 0.2010, REC_TOL, "0.201"),
    Value("Section 7 dial", "rms_p0", "erank", 5.43, ERANK_TOL, "5.43"),
    Value("Section 7 dial", "geo_p0", "rec", 0.2292, REC_TOL, "0.229"),
    Value("Section 7 dial", "geo_p0", "erank", 5.83, ERANK_TOL, "5.8"),
    Value("Section 7 dial", "rms", "monotone", 1, 0.0, "monotone in p"),
]


def table2() -> list[Value]:
    return TABLE2 + TABLE2_SPLIT


def every() -> list[Value]:
    return table2() + DIAL


def lookup(source: str, row: str, quantity: str) -> Value:
    for value in every():
        if (value.source, value.row, value.quantity) == (source, row, quantity):
            return value
    raise KeyError(f"no published value {source}:{row}:{quantity}")
