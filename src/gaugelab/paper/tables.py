"""LaTeX and HTML tables, rendered from the workflow's summaries only (no typed-in numbers)."""

from __future__ import annotations

import html
import math
import re

import pandas as pd

from ..sensing import select
from ..optim import cards


def fmt(value: float, digits: int) -> str:
    return f"{value:.{digits}f}" if math.isfinite(value) else "--"


def table2_rows(summary: pd.DataFrame, near_ties: set[str]) -> list[dict]:
    """The selected rows of Table 2, best recovery first."""
    chosen = summary[summary["selected"]].copy()
    chosen["order"] = chosen["rec"].fillna(math.inf)
    rows = []
    for _, r in chosen.sort_values(["order", "method"]).iterrows():
        rows.append({"method": r["method"], "class": select.klass(r["method"]), "lr": r["lr"],
                     "rec": r["rec"], "erank": r["erank"], "worst_train": r["worst_train"],
                     "steps": r["steps"], "near_tie": r["method"] in near_ties})
    return rows


def _split_line(summary: pd.DataFrame) -> str:
    chosen = summary[summary["selected"]]
    split, rank = select.clean_split(chosen), select.rank_split(chosen)
    head = (f"clean split {split['correct']}/{split['total']}, gap {split['gap']:.3f}"
            if split["verdict"] == "CLEAN" else f"split: {split['verdict']}")
    return f"{head}; rank split {rank['correct']}/{rank['total']} (threshold {rank['threshold']:.2f})"


def table2_latex(summary: pd.DataFrame, near_ties: set[str]) -> str:
    lines = [
        "% Table 2 (optimizer zoo), generated from the workflow's run records. Do not edit.",
        "\\begin{tabular}{llrrrr}",
        "\\toprule",
        "Method & Class & $\\eta^\\ast$ & rec & erank & worst train \\\\",
        "\\midrule",
    ]
    for r in table2_rows(summary, near_ties):
        mark = "$^\\dagger$" if r["near_tie"] else ""
        lr, worst = latex_numbers(f"{r['lr']:g}"), latex_numbers(f"{r['worst_train']:.1e}")
        lines.append(f"{cards.label(r['method'])}{mark} & {r['class']} & {lr} & {fmt(r['rec'], 4)} & "
                     f"{fmt(r['erank'], 2)} & {worst} \\\\")
    lines += ["\\midrule",
              f"\\multicolumn{{6}}{{l}}{{\\footnotesize {_split_line(summary)}}} \\\\"]
    if near_ties:
        lines.append("\\multicolumn{6}{l}{\\footnotesize $^\\dagger$ near-tie: the selection margin is "
                     "below the measured sensitivity} \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


STYLE = ("<style>table{border-collapse:collapse;font-family:serif;font-size:14px}"
         "th,td{padding:3px 10px;border-bottom:1px solid #ddd;text-align:right}"
         "th:first-child,td:first-child{text-align:left}caption{caption-side:bottom;"
         "font-size:12px;color:#5a5a5a;padding-top:6px}.exact{color:#1a7f37}"
         ".within{color:#9a6700}.differs{color:#cf222e;font-weight:bold}</style>")


def _html_table(header: list[str], rows: list[list[str]], caption: str = "", row_classes=None) -> str:
    out = [f"<!DOCTYPE html><html><head><meta charset='utf-8'>{STYLE}</head><body><table>"]
    out.append("<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>")
    for i, row in enumerate(rows):
        cls = f" class='{row_classes[i]}'" if row_classes and row_classes[i] else ""
        out.append(f"<tr{cls}>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>")
    if caption:
        out.append(f"<caption>{html.escape(caption)}</caption>")
    out.append("</table></body></html>")
    return "\n".join(out) + "\n"


def table2_html(summary: pd.DataFrame, near_ties: set[str]) -> str:
    rows = [[cards.plain(r["method"]) + (" †" if r["near_tie"] else ""), r["class"], f"{r['lr']:g}",
             fmt(r["rec"], 4), fmt(r["erank"], 2), f"{r['worst_train']:.1e}"]
            for r in table2_rows(summary, near_ties)]
    caption = _split_line(summary) + ("; † near-tie selection" if near_ties else "")
    return _html_table(["Method", "Class", "η*", "rec", "erank", "worst train"], rows, caption)


def _dial_rows(envelope: pd.DataFrame):
    for _, r in envelope.iterrows():
        yield r, f"{r['p']:g}", r["convention"].upper()


def dial_latex(envelope: pd.DataFrame, verdicts: pd.DataFrame) -> str:
    """The dial table: arm A (per-p tuned), both conventions; arm B's verdict per shared lr."""
    lines = ["% Section 7 dial (Adam-p), generated from the workflow's run records. Do not edit.",
             "\\begin{tabular}{llrrrr}", "\\toprule",
             "Scalar & $p$ & $\\eta^\\ast$ & rec & erank & steps \\\\", "\\midrule"]
    for r, p, conv in _dial_rows(envelope):
        lines.append(f"{conv} & {p} & {r['lr']:g} & {fmt(r['rec'], 4)} $\\pm$ {fmt(r['rec_sd'], 4)} & "
                     f"{fmt(r['erank'], 1)} & {int(r['steps']) if math.isfinite(r['steps']) else '--'} \\\\")
    lines += ["\\midrule"]
    for _, v in verdicts.iterrows():
        note = latex_text(f"fixed lr {v['lr']:g} (RMS): {v['verdict']}")
        lines.append(f"\\multicolumn{{6}}{{l}}{{\\footnotesize {note}}} \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def dial_html(envelope: pd.DataFrame, verdicts: pd.DataFrame) -> str:
    rows = [[conv, p, f"{r['lr']:g}", f"{fmt(r['rec'], 4)} ± {fmt(r['rec_sd'], 4)}", fmt(r["erank"], 1),
             str(int(r["steps"])) if math.isfinite(r["steps"]) else "--"] for r, p, conv in _dial_rows(envelope)]
    caption = "; ".join(f"fixed lr {v['lr']:g} (RMS): {v['verdict']}" for _, v in verdicts.iterrows())
    return _html_table(["Scalar", "p", "η*", "rec ± sd", "erank", "steps"], rows, caption)


# Section 5's controls (sensing.md §9, §10): Table 6 in its own layout, the others as plain tables.

def _latex_table(comment: str, header: list[str], rows: list[list[str]], notes: list[str] = ()) -> str:
    """A booktabs tabular: first column left, the others right; ``notes`` as footnote lines."""
    width = len(header)
    lines = [f"% {comment}, generated from the workflow's run records. Do not edit.",
             f"\\begin{{tabular}}{{l{'r' * (width - 1)}}}", "\\toprule", " & ".join(header) + " \\\\", "\\midrule"]
    lines += [" & ".join(row) + " \\\\" for row in rows]
    if notes:
        lines.append("\\midrule")
        lines += [f"\\multicolumn{{{width}}}{{l}}{{\\footnotesize {note}}} \\\\" for note in notes]
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


# LaTeX's special characters, and the symbols the tables' text uses, as LaTeX (one pass, so an
# escape is never escaped again).
_LATEX = {"\\": "\\textbackslash{}", "&": "\\&", "%": "\\%", "$": "\\$", "#": "\\#", "_": "\\_",
          "{": "\\{", "}": "\\}", "~": "\\textasciitilde{}", "^": "\\textasciicircum{}", "<": "$<$", ">": "$>$",
          "≤": "$\\leq$", "≥": "$\\geq$", "×": "$\\times$", "σ": "$\\sigma$", "±": "$\\pm$", "†": "$^\\dagger$",
          "−": "$-$", "≈": "$\\approx$", "τ": "$\\tau$", "→": "$\\to$", "–": "--", "—": "---", "ᵀ": "$^\\top$"}
_SCIENTIFIC = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)e([+-]?\d+)(?![\w.])")


def latex_numbers(text: str) -> str:
    """Numbers printed as 5.1e-08 typeset as LaTeX users expect: $5.1\\times10^{-8}$."""
    return _SCIENTIFIC.sub(lambda m: f"${m.group(1)}\\times10^{{{int(m.group(2))}}}$", text)


def latex_text(text: str) -> str:
    """Plain text (a label, a note, a cell) as LaTeX: every special character escaped, the
    tables' symbols in math mode, numbers in scientific notation typeset."""
    return latex_numbers("".join(_LATEX.get(c, c) for c in str(text)))



def _order(methods) -> list[str]:
    """Equivariant methods first, then coordinate-wise, each in the given order."""
    methods = list(dict.fromkeys(methods))
    return [m for m in methods if select.klass(m) == "eq"] + [m for m in methods if select.klass(m) == "cw"]


TABLE6_MODES = ("const", "decay", "decay-full")


def _table6_cell(table: pd.DataFrame, mode: str, rule: str, method: str, floor_mark: str) -> str:
    hit = table[(table["mode"] == mode) & (table["rule"] == rule) & (table["method"] == method) & table["selected"]]
    if not len(hit):
        return ""
    r = hit.iloc[0]
    return f"{fmt(r['rec'], 4)}{floor_mark if r['floor'] else ''} ({r['lr']:g})"


def _table6_body(table: pd.DataFrame, floor_mark: str) -> list[tuple[str, list[str]]]:
    rows = []
    for method in _order(table[table["mode"] != "const-60k"]["method"]):
        rows.append((method, [_table6_cell(table, mode, rule, method, floor_mark)
                              for mode in TABLE6_MODES for rule in ("rec-sel", "spd-sel")]))
    if (table["mode"] == "const-60k").any():
        rows.append(("rmsprop@60k", [_table6_cell(table, "const-60k", rule, cards.RMSPROP, floor_mark)
                                     for rule in ("rec-sel", "spd-sel")] + [""] * 4))
    return rows


def _table6_notes(counts: pd.DataFrame) -> list[str]:
    parts = [f"{r['mode']} {r['rule']} {r['correct']}/{r['total']} (mid {fmt(r['threshold'], 3)})"
             for _, r in counts.iterrows()]
    return ["midpoint count: " + "; ".join(parts)]


def table6_latex(table: pd.DataFrame, counts: pd.DataFrame, rmsprop_budget: int) -> str:
    """App. D.1 Table 6: rec (lr*) per method under each schedule mode and selection rule."""
    lines = ["% Table 6 (schedule control), generated from the workflow's run records. Do not edit.",
             "\\begin{tabular}{llrrrrrr}", "\\toprule",
             " & & \\multicolumn{2}{c}{const} & \\multicolumn{2}{c}{decay} & \\multicolumn{2}{c}{decay-full} \\\\",
             "Method & Class & rec-sel & spd-sel & rec-sel & spd-sel & rec-sel & spd-sel \\\\", "\\midrule"]
    for method, cells in _table6_body(table, "$^\\dagger$"):
        name = (f"RMSProp, const, $T{{=}}{rmsprop_budget}$" if method == "rmsprop@60k" else cards.label(method))
        klass = select.klass(method.split("@")[0])
        lines.append(f"{name} & {klass} & " + " & ".join(latex_numbers(c) for c in cells) + " \\\\")
    lines.append("\\midrule")
    for note in [latex_text(n) for n in _table6_notes(counts)] + ["$^\\dagger$ the selected row did not interpolate "
                                                                  "(mean train above the bar): a floor, not a bias"]:
        lines.append(f"\\multicolumn{{8}}{{l}}{{\\footnotesize {note}}} \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def table6_html(table: pd.DataFrame, counts: pd.DataFrame, rmsprop_budget: int) -> str:
    rows = []
    for method, cells in _table6_body(table, " †"):
        name = f"RMSProp, const, T={rmsprop_budget}" if method == "rmsprop@60k" else cards.plain(method)
        rows.append([name, select.klass(method.split("@")[0]), *cells])
    header = ["Method", "Class"] + [f"{mode} {rule}" for mode in TABLE6_MODES for rule in ("rec-sel", "spd-sel")]
    caption = "; ".join(_table6_notes(counts)) + "; † selected row did not interpolate: a floor, not a bias"
    return _html_table(header, rows, caption)


def _rows_for(frame: pd.DataFrame, columns: list[tuple[str, str, int]]) -> list[list[str]]:
    """Format each row: (column, kind, digits) with kind in lr / num / sci / int / text."""
    out = []
    for _, r in frame.iterrows():
        cells = []
        for col, kind, digits in columns:
            v = r[col]
            if kind == "lr":
                cells.append(f"{v:g}")
            elif kind == "num":
                cells.append(fmt(float(v), digits))
            elif kind == "sci":
                cells.append(f"{float(v):.1e}" if math.isfinite(float(v)) else "--")
            elif kind == "int":
                cells.append(str(int(v)) if math.isfinite(float(v)) else "--")
            elif isinstance(v, float) and not math.isfinite(v):
                cells.append("--")
            else:
                cells.append(cards.plain_word(v) if isinstance(v, str) else str(v))
        out.append(cells)
    return out


def simple_table(frame: pd.DataFrame, columns: list[tuple[str, str, int]], header: list[str], comment: str,
                 notes: list[str] = ()) -> tuple[str, str]:
    """A control's table as (LaTeX, HTML) from its extraction frame; every cell from the frame."""
    rows = _rows_for(frame, columns)
    latex = _latex_table(comment, [latex_text(h) for h in header],
                         [[latex_text(c) for c in row] for row in rows], [latex_text(n) for n in notes])
    return latex, _html_table(header, rows, "; ".join(notes))


# --- Section 6 and Appendix D.5: attention twins ------------------------------------------------

def drift_text(value: float) -> str:
    """A drift as the paper prints it: %.1e, exact zeros as 0 (attention.md §11.1)."""
    if not math.isfinite(value):
        return "--"
    return "0" if value == 0 else f"{value:.1e}"


def twin_label(r, latex: bool = False) -> str:
    """"Adam, gauge" / "Adam, A=I" / "Adam, noise 1e-07" for a summary row."""
    name = cards.short(r["optimizer"])
    if r["twin"] == "identity":
        return f"{name}, $A{{=}}I$" if latex else f"{name}, A=I"
    if r["twin"] == "noise":
        return f"{name}, noise {r['sigma']:g}"
    return f"{name}, gauge"


def table3_rows(summary: pd.DataFrame, metric: str = "drift") -> tuple[list[int], list[tuple]]:
    """Table 3's rows (the S6-main and S6-noise records, Adam, SGD, scalar-Adam, Muon; gauge,
    A = I, noise) and its columns (the checkpoints): ``metric`` is drift or qk_mean."""
    from . import twin_summary as ts

    s6 = summary[summary["sets"].str.split().apply(lambda names: "s6_main" in names or "s6_noise" in names)]
    steps = ts.steps_of(summary)
    return steps, [(r, [float(r[f"{metric}_{s}"]) for s in steps]) for _, r in s6.iterrows()]


def table3_footer(summary: pd.DataFrame) -> str:
    """Muon's gauge twin against its noise twin: dec(100) and the mean of dec(s) over s > 100."""
    from . import twin_summary as ts

    s6 = summary[summary["sets"].str.contains("s6_")]
    inits = s6[s6["optimizer"] == cards.MUON]["init_seed"].unique()
    if len(inits) == 0:
        return "no Muon pairs"
    chaos = ts.muon_chaos(s6, int(inits[0]))
    return (f"Muon gauge vs noise twin: dec(100) = {fmt(chaos['dec100'], 2)} decades; "
            f"mean dec(s) over s > 100 = {fmt(chaos['mean_after100'], 2)} decades")


def table3_latex(summary: pd.DataFrame, metric: str = "drift") -> str:
    """Table 3 (drift) or its companion (QK mean) as LaTeX."""
    steps, rows = table3_rows(summary, metric)
    what = "relative logit distance" if metric == "drift" else "QK drift (mean over heads)"
    lines = [f"% Table 3 ({what} between twins), generated from the workflow's run records. Do not edit.",
             "\\begin{tabular}{l" + "r" * len(steps) + "}", "\\toprule",
             "Twin & " + " & ".join(str(s) for s in steps) + " \\\\", "\\midrule"]
    lines += [latex_numbers(twin_label(r, latex=True)) + " & " + " & ".join(latex_text(drift_text(v)) for v in values)
              + " \\\\" for r, values in rows]
    if metric == "drift":
        lines.append("\\midrule")
        lines.append(f"\\multicolumn{{{len(steps) + 1}}}{{l}}"
                     f"{{\\footnotesize {latex_text(table3_footer(summary))}}} \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def table3_html(summary: pd.DataFrame, metric: str = "drift") -> str:
    steps, rows = table3_rows(summary, metric)
    body = [[twin_label(r)] + [drift_text(v) for v in values] for r, values in rows]
    caption = (table3_footer(summary) if metric == "drift"
               else "QK drift: mean over heads of the per-head invariant drift")
    return _html_table(["Twin"] + [str(s) for s in steps], body, caption)


D5_LABEL = {
    "adam_gauge_step1_min": "Adam gauge drift at step 1, min",
    "adam_gauge_step1_max": "Adam gauge drift at step 1, max",
    "adam_gauge_final_min": "Adam gauge final drift, min", "adam_gauge_final_max": "Adam gauge final drift, max",
    "ratio_d5": "structural ratio (final step)",
    "equivariant_gauge_final_max": "SGD and scalar-Adam gauge final drift, max",
}


def d5_text(quantity: str, value: float) -> tuple[str, str]:
    """Label and printed value of one Appendix D.5 summary quantity."""
    if quantity == "ratio_d5":
        return D5_LABEL[quantity], f"{value:.0f}×" if math.isfinite(value) else "--"
    if quantity.startswith("adam_noise_final_sigma"):
        return f"Adam noise twin (σ = {quantity.removeprefix('adam_noise_final_sigma')}) final drift", drift_text(value)
    if quantity.startswith("muon_chaos_mean_init"):
        return f"Muon init {quantity.removeprefix('muon_chaos_mean_init')}: mean dec(s), s ≥ 100", fmt(value, 2)
    return D5_LABEL[quantity], drift_text(value)


def d5_latex(d5: pd.DataFrame) -> str:
    lines = ["% Appendix D.5 summary (CPU float32 multi-seed twins), generated from the run records. Do not edit.",
             "\\begin{tabular}{lrl}", "\\toprule", "Quantity & Value & Note \\\\", "\\midrule"]
    for _, r in d5.iterrows():
        label, text = (latex_text(t) for t in d5_text(r["quantity"], r["value"]))
        lines.append(f"{label} & {text} & {latex_text(r['note'])} \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def d5_html(d5: pd.DataFrame) -> str:
    rows = [[*d5_text(r["quantity"], r["value"]), r["note"]] for _, r in d5.iterrows()]
    return _html_table(["Quantity", "Value", "Note"], rows, "Appendix D.5: CPU float32 multi-seed twins")


# --- the equivariance diagnostic (beyond the paper) ----------------------------------------------

VERDICT_CLASS = {"equivariant": "exact", "basis-dependent": "differs", "chaotic": "within",
                 "determinism failure": "differs", "inconclusive": "within"}  # the HTML row colour


def diagnosis_evidence(row: dict) -> str:
    """The numbers a diagnostic verdict rests on, in one phrase."""
    v = row["verdict"]
    if v == "equivariant":
        return f"max drift {row['gauge_max']:.1e} ≤ floor {row['floor']:.1e}"
    if v == "basis-dependent":
        return f"splits at step {int(row['split_step'])}, {row['ratio']:.0e}× noise twin"
    if v == "chaotic":
        return (f"leaves the floor at step {int(row['split_step'])}, ≤ {row['max_gauge_over_noise']:.1e}× "
                f"noise twin ({row['late_decades']:.2f} decades late)")
    if v == "determinism failure":
        return f"A=I twin differs from step {row['identity_first_difference']}"
    if row.get("diverged_at") is not None:
        return f"diverged at step {int(row['diverged_at'])}"
    if not math.isfinite(row["split_step"]):
        return f"base moved only {row['base_moved']:.1e}"
    return f"leaves the floor at step {int(row['split_step'])}, {row['ratio']:.1e}× noise twin"


def diagnosis_html(rows: list[dict], caption: str) -> str:
    """"Which optimizers respect the gauge": one row per (optimizer, testbed) of
    ``diagnose.summary_rows``; ``caption``: ``diagnose.caption`` of the same rows."""
    body = [[r["optimizer"], r["kind"], r["testbed"], f"{r['lr']:g}", r["verdict"], diagnosis_evidence(r),
             f"{r['gauge_step1']:.1e}", f"{r['noise_step1']:.1e}", r["a_priori"] or "--"] for r in rows]
    return _html_table(["Optimizer", "Kind", "Testbed", "lr", "Verdict", "Evidence", "gauge drift (1)",
                        "noise drift (1)", "A-priori class"], body, caption,
                       [VERDICT_CLASS[r["verdict"]] for r in rows])


def diagnosis_latex(rows: list[dict]) -> str:
    """The same table for LaTeX (booktabs)."""
    tex = latex_text
    lines = ["% Which optimizers respect the gauge (equivariance diagnostic), generated from the",
             "% workflow's diagnosis files. Do not edit.",
             "\\begin{tabular}{lllll}", "\\toprule",
             "Optimizer & Testbed & Verdict & Evidence & A-priori \\\\", "\\midrule"]
    for r in rows:
        lines.append(f"\\texttt{{{tex(r['optimizer'])}}} & {tex(r['testbed'])} & {tex(r['verdict'])} & "
                     f"{tex(diagnosis_evidence(r))} & {tex(r['a_priori'] or '--')} \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"
