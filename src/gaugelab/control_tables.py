"""The control tables of Section 5 (its second size, App. D.2, App. D.4, the convex reference
row): which rows and columns each shows, from its extraction. One definition for the workflow's
table jobs and ``gaugelab table``; each returns its frames and its (LaTeX, HTML)."""

from __future__ import annotations

import pandas as pd

from . import controls, tables


def second_size(summary: pd.DataFrame, tol: float) -> tuple[pd.DataFrame, str, str]:
    """Section 5's second size: the S2-selected row per method, and whether it interpolates."""
    chosen = summary[summary["selected"]].assign(interpolates=lambda f: f["train"] < tol)
    columns = [("method", "text", 0), ("lr", "lr", 0), ("rec", "num", 4), ("erank", "num", 2),
               ("train", "sci", 0), ("interpolates", "text", 0)]
    tex, html = tables.simple_table(chosen, columns, ["Method", "lr*", "rec", "erank", "mean train",
                                                      "interpolates"], "Section 5 second size")
    return chosen, tex, html


def lr_sensitivity(summary: pd.DataFrame, grids: dict[str, list[float]], tol: float) -> tuple[pd.DataFrame, str, str]:
    """App. D.2: every (method, lr) cell, the flow-limit row flagged."""
    rows = controls.lr_sensitivity(summary, grids, tol)
    columns = [("method", "text", 0), ("lr", "lr", 0), ("rec", "num", 4), ("erank", "num", 2), ("train", "sci", 0),
               ("steps", "int", 0), ("flow_limit", "text", 0), ("note", "text", 0)]
    tex, html = tables.simple_table(rows, columns, ["Method", "lr", "rec", "erank", "mean train", "mean steps",
                                                    "flow limit", ""], "App. D.2 learning-rate sensitivity")
    return rows, tex, html


def init_scale(summaries: dict[float, pd.DataFrame], zoo_summary: pd.DataFrame, zoo_init: float,
               tol: float) -> tuple[pd.DataFrame, pd.DataFrame, str, str]:
    """App. D.4: the selected row per (init, method), and the split checks per init as notes."""
    rows, checks = controls.init_scale(summaries, zoo_summary, zoo_init, tol)
    columns = [("init", "lr", 0), ("method", "text", 0), ("class", "text", 0), ("lr", "lr", 0), ("rec", "num", 4),
               ("erank", "num", 2), ("train", "sci", 0), ("as_table2", "text", 0)]
    notes = [f"init {c['init']:g}: weak check max(eq rec) {c['eq_max']:.4f} < Adam {c['adam_rec']:.4f} "
             f"{c['weak_check']}; split {c['split']}" for _, c in checks.iterrows()]
    tex, html = tables.simple_table(rows, columns, ["init", "Method", "Class", "lr*", "rec", "erank", "mean train",
                                                    "as Table 2"], "App. D.4 initialisation scale", notes)
    return rows, checks, tex, html


def nuclear_reference(runs: list[dict]) -> tuple[pd.DataFrame, str, str]:
    """Table 2's min-nuclear-norm reference row: per seed and the mean."""
    summary = controls.nuclear_summary(runs)
    columns = [("seed", "text", 0), ("rec", "num", 4), ("erank", "num", 2), ("nuc", "num", 3),
               ("nuc_truth", "num", 3), ("feasibility", "sci", 0), ("iterations", "int", 0),
               ("primal_residual", "sci", 0)]
    header = ["seed", "rec", "erank", "nuclear norm", "of X*", "feasibility", "iterations", "primal residual"]
    tex, html = tables.simple_table(summary, columns, header, "Table 2 min-nuclear-norm reference row")
    return summary, tex, html
