"""The merging extension's table (attention.md §13; not a paper result), from its records only:
no torch, like every table."""

from __future__ import annotations

from ..optim import cards
from .tables import _html_table, _latex_table, latex_text

COLUMNS = [  # (field, header, format)
    ("qk_max", "QK max", "e"), ("rho_max", "rho max", "e"), ("drift_ab", "drift(A,B)", "e"),
    ("aligned_drift_to_a", "aligned: drift to A", "e"), ("aligned_drift_to_b", "aligned: drift to B", "e"),
    ("aligned_val_loss", "aligned: val loss", "f"), ("aligned_acc", "aligned: val acc", "f"),
    ("aligned_barrier", "aligned: barrier", "e"), ("naive_drift_to_a", "naive: drift to A", "e"),
    ("naive_val_loss", "naive: val loss", "f"), ("naive_barrier", "naive: barrier", "e"),
]


def _fmt(value, kind: str) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if not isinstance(value, (int, float)) or value != value:
        return "--"
    if kind == "f":
        return f"{value:.4f}"
    return "0" if value == 0 else f"{value:.1e}"


def table_rows(rows: list[dict]) -> tuple[list[str], list[list[str]]]:
    header = ["optimizer", "twin", "steps"] + [h for _, h, _ in COLUMNS] + ["head-mergeable"]
    body = [[cards.short(r["optimizer"]), r["twin"], str(r["steps"])] + [_fmt(r[f], k) for f, _, k in COLUMNS]
            + [_fmt(r["head_mergeable"], "")] for r in rows]
    return header, body


def latex(rows: list[dict]) -> str:
    header, body = table_rows(rows)
    tau = rows[0]["tau"] if rows else float("nan")
    return _latex_table("EXTENSION (not in the paper): merging float64 twins", [latex_text(h) for h in header],
                        [[latex_text(c) for c in row] for row in body],
                        [latex_text(f"EXTENSION, not a paper result. Head-mergeable: max per-head QK drift "
                                    f"≤ {tau:g}.")])


def html(rows: list[dict]) -> str:
    header, body = table_rows(rows)
    tau = rows[0]["tau"] if rows else float("nan")
    return _html_table(header, body, f"EXTENSION (not in the paper): per-head Procrustes merge of float64 twins; "
                                     f"head-mergeable iff max per-head QK drift <= {tau:g}")
