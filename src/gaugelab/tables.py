"""LaTeX and HTML tables, rendered from the workflow's summaries only (no typed-in numbers)."""

from __future__ import annotations

import html
import math

import pandas as pd

from . import select

DISPLAY = {
    "muon": "Muon", "gd": "GD", "scalar_adam": "scalar-Adam ($p{=}0$)", "shampoo": "Shampoo",
    "lion": "Lion", "signum": "signum", "rmsprop": "RMSProp", "adafactor": "Adafactor",
    "adam": "Adam", "momentum": "momentum",
}
PLAIN = {k: v.replace("$p{=}0$", "p=0") for k, v in DISPLAY.items()}


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
        lines.append(f"{DISPLAY[r['method']]}{mark} & {r['class']} & {r['lr']:g} & {fmt(r['rec'], 4)} & "
                     f"{fmt(r['erank'], 2)} & {r['worst_train']:.1e} \\\\")
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
    rows = [[PLAIN[r["method"]] + (" †" if r["near_tie"] else ""), r["class"], f"{r['lr']:g}",
             fmt(r["rec"], 4), fmt(r["erank"], 2), f"{r['worst_train']:.1e}"]
            for r in table2_rows(summary, near_ties)]
    caption = _split_line(summary) + ("; † near-tie selection" if near_ties else "")
    return _html_table(["Method", "Class", "η*", "rec", "erank", "worst train"], rows, caption)


def _num(value, quantity: str) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return "--"
    if quantity == "lr":
        return f"{value:g}"
    if quantity == "count":
        return f"{int(value)}"
    if quantity == "monotone":
        return "yes" if value else "no"
    if quantity == "erank":
        return f"{value:.2f}"
    return f"{value:.4f}"


def comparison_html(comparison: pd.DataFrame) -> str:
    classes = {"exact": "exact", "within measured sensitivity": "within", "differs": "differs"}
    rows, row_classes = [], []
    for _, r in comparison.iterrows():
        sens = r["sensitivity"]
        rows.append([f"{r['source']}", PLAIN.get(r["row"], r["row"]), r["quantity"], r["published"],
                     _num(r["reproduced"], r["quantity"]), r["at"],
                     f"{r['tolerance']:g}", "--" if not math.isfinite(sens) else f"{sens:.1e}",
                     r["verdict"], r["note"]])
        row_classes.append(classes[r["verdict"]])
    counts = comparison["verdict"].value_counts()
    caption = ", ".join(f"{counts.get(v, 0)} {v}" for v in classes)
    return _html_table(["Source", "Row", "Quantity", "Published", "Reproduced", "At", "Tolerance",
                        "Sensitivity", "Verdict", "Note"], rows, caption, row_classes)


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
        lines.append(f"\\multicolumn{{6}}{{l}}{{\\footnotesize fixed lr {v['lr']:g} (RMS): {v['verdict']}}} \\\\")
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def dial_html(envelope: pd.DataFrame, verdicts: pd.DataFrame) -> str:
    rows = [[conv, p, f"{r['lr']:g}", f"{fmt(r['rec'], 4)} ± {fmt(r['rec_sd'], 4)}", fmt(r["erank"], 1),
             str(int(r["steps"])) if math.isfinite(r["steps"]) else "--"] for r, p, conv in _dial_rows(envelope)]
    caption = "; ".join(f"fixed lr {v['lr']:g} (RMS): {v['verdict']}" for _, v in verdicts.iterrows())
    return _html_table(["Scalar", "p", "η*", "rec ± sd", "erank", "steps"], rows, caption)
