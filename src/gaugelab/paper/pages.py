"""The comparison as a reader sees it: the HTML table grouped by paper section, the report's
landing page (the verdict first), and the reproduction appendix (a LaTeX document that inputs
every generated table and figure). Rendering only: the verdicts come from :mod:`compare`."""

from __future__ import annotations

import html
import math
import re

import pandas as pd

from . import compare, tables
from ..core import records
from ..optim import cards

_QUANTITY = {
    "lr": "η*", "rec": "rec", "erank": "erank", "count": "count", "gap": "gap", "holds": "holds",
    "monotone": "monotone", "gain": "rec gain", "delta": "rec change", "rec_diff": "rec difference",
    "drift_final": "final drift",
    "qk_final": "final QK drift", "max_drift": "max drift", "decades": "gap (decades)",
    "dec_100": "dec(100)", "dec_after100": "mean dec(s), s > 100", "dec_from100": "mean dec(s), s ≥ 100",
    "ratio": "ratio", "ratio_1": "step-1 ratio", "ratio_t9": "ratio_T9", "floor_50": "max drift, s ≤ 50",
    "val_acc": "validation accuracy", "val_loss1": "val loss, copy 1", "val_loss2": "val loss, copy 2",
    "decades_1": "step-1 gap (decades)", "step1_min": "step-1 min", "step1_max": "step-1 max",
    "final_min": "final min", "final_max": "final max", "acc_gap": "accuracy gap",
    "step1": "step 1", "final": "final", "per_head_max": "per-head QK max, final", "acc_final": "final accuracy",
    "train_loss_final": "final train loss",
}


def quantity_name(quantity: str) -> str:
    step = re.fullmatch(r"drift_(\d+)", quantity)
    return f"drift, step {step.group(1)}" if step else _QUANTITY.get(quantity, quantity)


def row_name(row: str) -> str:
    """A comparison row as the paper names it: method labels, dial variants and init rows."""
    dial = re.fullmatch(r"(rms|geo)_p([\d.]+)", row)
    if row == "p1":
        return "Adam (p = 1)"
    if dial:
        return f"{dial.group(1).upper()}, p = {dial.group(2)}"
    if row in ("rms", "geo"):
        return f"{row.upper()} envelope"
    words = row.split(" ")
    return " ".join(cards.plain_word(w) for w in words)


def comparison_value(value, quantity: str) -> str:
    """A reproduced (or published) value as the comparison prints it."""
    if isinstance(value, float) and not math.isfinite(value):
        return "--" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if quantity in ("lr",):
        return f"{value:g}"
    if quantity in ("count",):
        return f"{int(value)}"
    if quantity in ("holds", "monotone"):
        return "yes" if value else "no"
    if quantity == "erank":
        return f"{value:.2f}"
    if quantity in ("rec", "gap", "gain", "delta", "rec_diff"):
        return f"{value:.4f}"
    if quantity.startswith(("dec", "qk_")):
        return f"{value:.2f}"
    if quantity.startswith(("ratio",)):
        return f"{value:.0f}" if value >= 10 else f"{value:.3g}"
    if quantity.startswith(("val_",)):
        return f"{value:.3f}"
    if value == 0:
        return "0"
    return f"{value:.3g}" if 0.01 <= abs(value) < 100 else f"{value:.1e}"


def _published(r) -> str:
    """The published value in the reproduced value's units; a claim as the paper words it."""
    numeric = re.fullmatch(r"[\d.]+(e-?\d+)?[x%]?", str(r["published"]).strip())
    return comparison_value(float(r["published_value"]), r["quantity"]) if numeric else str(r["published"])


def _difference(r) -> str:
    if r["verdict"] == compare.NOT_RUN or not math.isfinite(r["reproduced"]) or r["quantity"] in ("holds", "monotone"):
        return ""
    if str(r["tolerance"]).startswith(("±", "equal")):
        d = r["reproduced"] - r["published_value"]
        return "0" if d == 0 else f"{d:+.1e}"
    return ""


CLASSES = {compare.EXACT: "exact", compare.BOUND: "bound", compare.WITHIN: "within", compare.DIFFERS: "differs",
           compare.NOT_RUN: "notrun"}
STYLE = ("<style>body{font-family:serif;font-size:14px}table{border-collapse:collapse;margin-bottom:18px}"
         "th,td{padding:3px 8px;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}"
         "td.num{text-align:right;font-variant-numeric:tabular-nums}h2{font-size:17px;margin:18px 0 6px}"
         ".exact td.v{color:#1a7f37}.bound td.v{color:#0b6e99}.within td.v{color:#9a6700}"
         ".differs td.v{color:#cf222e;font-weight:bold}.notrun td.v{color:#6e7781}"
         "p.note{font-size:12px;color:#5a5a5a}</style>")
HEADER = ["Source", "Row", "Quantity", "Published", "Reproduced", "Difference", "Held to", "Sensitivity",
          "Verdict", "At / note"]
NUMERIC = {3, 4, 5, 7}


def _cells(r) -> list[str]:
    sens = r["sensitivity"]
    note = "; ".join(x for x in (str(r["at"]), str(r["note"])) if x and x != "nan")
    return [r["source"], row_name(r["row"]), quantity_name(r["quantity"]), _published(r),
            comparison_value(r["reproduced"], r["quantity"]), _difference(r), str(r["tolerance"]),
            "--" if not math.isfinite(sens) else f"{sens:.1e}", r["verdict"], note]


def counts_html(comparison: pd.DataFrame) -> str:
    table = compare.counts(comparison)
    head = "".join(f"<th>{html.escape(c)}</th>" for c in ["section", *table.columns])
    body = "".join("<tr><td>" + html.escape(str(s)) + "</td>" + "".join(f"<td class='num'>{int(n)}</td>" for n in row)
                   + "</tr>" for s, row in table.iterrows())
    return f"<table><tr>{head}</tr>{body}</table>"


def comparison_html(comparison: pd.DataFrame, numerics: pd.DataFrame | None = None) -> str:
    """Every published value beside the reproduced one, grouped by paper section, verdict counts
    first."""
    out = [f"<!DOCTYPE html><html><head><meta charset='utf-8'>{STYLE}</head><body>",
           "<h2>Verdicts</h2>", counts_html(comparison)]
    if numerics is not None and len(numerics):
        out.append(f"<p class='note'>{html.escape(provenance(numerics))}.</p>")
    for section, part in comparison.groupby("section", sort=False):
        out += [f"<h2>{html.escape(section)}</h2>", "<table><tr>"
                + "".join(f"<th>{html.escape(h)}</th>" for h in HEADER) + "</tr>"]
        for _, r in part.iterrows():
            cells = "".join(f"<td class='{'num ' if i in NUMERIC else ''}{'v' if i == 8 else ''}'>{html.escape(c)}</td>"
                            for i, c in enumerate(_cells(r)))
            out.append(f"<tr class='{CLASSES[r['verdict']]}' title='{html.escape(str(r['where']))}'>{cells}</tr>")
        out.append("</table>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def provenance(numerics: pd.DataFrame) -> str:
    """One sentence: how many records, under which numerics mode, on which CPUs
    (records.numerics_table's rows)."""
    mode = tuple(numerics.iloc[0][field] for field in records.NUMERICS_FIELDS)
    cpus = sorted({c for cell in numerics["cpu"] for c in str(cell).split("; ")})
    return (f"{int(numerics['records'].sum())} records, made under {records.describe(mode)} numerics "
            f"on {', '.join(cpus)}")


_RELEASED_FILE = re.compile(r"(?:logs|experiments)/[\w./-]+\.(?:txt|md)")


def why_not_exact(r, source: bool = True) -> str:
    """One line on a row that is not exact: what was reproduced against what, and why (``source``:
    name the table or log it belongs to; a value from the paper's released files names its file)."""
    name = f"{row_name(r['row'])}, {quantity_name(r['quantity'])}"
    name = f"{r['source']}, {name}" if source else name
    released = _RELEASED_FILE.search(str(r["where"]))
    name += f" ({released.group()})" if released else ""
    if r["verdict"] == compare.NOT_RUN:
        return f"{name}: {r['note']}"
    got = f"reproduced {comparison_value(r['reproduced'], r['quantity'])} against {_published(r)}"
    if r["verdict"] == compare.BOUND:
        return f"{name}: a bound ({r['tolerance']}), {got}"
    sens = r["sensitivity"]
    sens_text = f", measured sensitivity {sens:.1e}" if math.isfinite(sens) else ", sensitivity not measured"
    extra = f"; {r['note']}" if str(r["note"]) not in ("", "nan") else ""
    return f"{name}: {got} (held to {r['tolerance']}{sens_text}){extra}"


# --- LaTeX macros -------------------------------------------------------------------------------

def macro_name(*parts: str) -> str:
    """A LaTeX command name from words: letters only (digits spelled out)."""
    digits = "Zero One Two Three Four Five Six Seven Eight Nine".split()
    text = " ".join(parts)
    text = re.sub(r"\d", lambda m: f" {digits[int(m.group())]} ", text)
    return "Repro" + "".join(w.capitalize() for w in re.split(r"[^A-Za-z]+", text) if w)


def macros(comparison: pd.DataFrame) -> str:
    """``\\newcommand`` per reproduced number (and per verdict count), for a manuscript to ``\\input``."""
    lines = ["% Reproduced values, generated by the workflow from its run records. Do not edit."]
    for _, r in comparison.iterrows():
        value = r["reproduced"]
        text = comparison_value(value, r["quantity"]) if math.isfinite(value) else "--"
        lines.append(f"\\newcommand{{\\{macro_name(r['source'], r['row'], r['quantity'])}}}"
                     f"{{{tables.latex_text(text)}}}")
    totals = comparison["verdict"].value_counts()
    for v in compare.VERDICTS:
        lines.append(f"\\newcommand{{\\{macro_name('verdict', v)}}}{{{int(totals.get(v, 0))}}}")
    return "\n".join(lines) + "\n"


# --- the report's landing page -----------------------------------------------------------------

def _rst_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A docutils simple table."""
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    rule = "  ".join("=" * w for w in widths)
    fmt = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths)).rstrip()
    return [rule, fmt(header), rule, *[fmt(r) for r in rows], rule]


def _rst_text(text: str) -> str:
    """Plain text safe inside reStructuredText (no markup, links or substitutions)."""
    return re.sub(r"([\\`*_|<>\[\]])", r"\\\1", text)


# Snakemake's report centres its landing page vertically in a box of the screen's height, which cuts
# off the top of a page taller than the screen; this page is, so it asks for the top instead.
_TOP_ALIGNED = [".. raw:: html", "",
                "   <style>div.grow.flex.items-center.h-screen{align-items:flex-start}</style>", ""]


def landing_rst(intro: str, comparison: pd.DataFrame, sections: dict[str, list[str]],
                numerics: pd.DataFrame | None = None, not_run: dict[str, list[str]] | None = None) -> str:
    """The report's first page: ``intro`` (the workflow description), then the verdict counts per
    section, which numerics mode and CPUs made the records (``numerics``: records.numerics_table),
    every row that is not exact with one line on why, and links to each section's tables and
    figures (``sections``: section -> result file names, Snakemake's link targets), with the
    opt-in targets that have not run named in their section's place (``not_run``: section ->
    its targets), so that a missing section reads as not asked for rather than lost."""
    table = compare.counts(comparison)
    lines = [intro.rstrip(), "", "{% raw %}",  # raw: Snakemake renders it with Jinja
             *_TOP_ALIGNED, "Verdict", "-------", ""]
    total = len(comparison)
    summary = ", ".join(f"{int(table.loc['all', v])} {v}" for v in compare.VERDICTS)
    lines += [f"{total} published numbers and claims of Sections 5–8: {summary}.", ""]
    if numerics is not None and len(numerics):
        lines += [f"The comparison rests on {_rst_text(provenance(numerics))}.", ""]
    lines += _rst_table(["section", *compare.VERDICTS, "rows"],
                        [[s, *[str(int(n)) for n in row]] for s, row in table.iterrows()])
    others = comparison[comparison["verdict"] != compare.EXACT]
    for verdict in (compare.DIFFERS, compare.WITHIN, compare.NOT_RUN, compare.BOUND):
        part = others[others["verdict"] == verdict]
        if len(part):
            lines += ["", f"**{verdict}** ({len(part)})", ""]
            for source, rows in part.groupby("source", sort=False):  # under its paper object
                lines += [f"- {_rst_text(source)} ({len(rows)})", ""]
                lines += [f"  - {_rst_text(why_not_exact(r, source=False))}" for _, r in rows.iterrows()]
                lines.append("")
    lines += ["", "Sections", "--------", ""]
    not_run = not_run or {}
    order = [s for s, _ in PRODUCT_SECTIONS]
    place = lambda section: order.index(section) if section in order else len(order)  # the paper's order
    for section in sorted(dict.fromkeys([*sections, *not_run]), key=place):
        targets = ", ".join(f"``snakemake {target}``" for target in not_run.get(section, []))
        if sections.get(section):
            links = ", ".join(f"`{name}`_" for name in sections[section])
            lines.append(f"- {section}: {links}" + (f" (not run here: {targets})" if targets else ""))
        elif targets:
            lines.append(f"- {section}: not run here (opt-in: {targets})")
    return "\n".join([*lines, "{% endraw %}"]) + "\n"


# --- the reproduction appendix -----------------------------------------------------------------

def appendix_tex(tables_: dict[str, list[str]], figures: dict[str, list[str]], macros: str,
                 comparison: pd.DataFrame) -> str:
    """A LaTeX document that inputs every generated table, includes every figure, loads the
    macros and states the verdict counts (paths relative to the document's folder)."""
    table = compare.counts(comparison)
    lines = ["% The reproduction appendix, generated by the workflow from its run records. Do not edit.",
             "\\documentclass[10pt]{article}", "\\usepackage[margin=2cm]{geometry}", "\\usepackage{booktabs}",
             "\\usepackage{graphicx}", "\\usepackage{float}", "\\usepackage[T1]{fontenc}",
             "\\usepackage{textcomp}", f"\\input{{{macros}}}", "\\begin{document}",
             "\\section*{Reproduction of ``The Loss Does Not See the Basis, but Adam Does''}",
             tables.latex_text(f"{len(comparison)} published numbers and claims; verdicts: ")
             + ", ".join(f"{int(table.loc['all', v])} {tables.latex_text(v)}" for v in compare.VERDICTS) + ".", ""]
    lines += ["\\begin{tabular}{l" + "r" * (len(table.columns)) + "}", "\\toprule",
              " & ".join(tables.latex_text(c) for c in ["section", *table.columns]) + " \\\\", "\\midrule"]
    lines += [" & ".join([tables.latex_text(str(s)), *[str(int(n)) for n in row]]) + " \\\\"
              for s, row in table.iterrows()]
    lines += ["\\bottomrule", "\\end{tabular}", ""]
    for section in dict.fromkeys([*tables_, *figures]):
        lines.append(f"\\section*{{{tables.latex_text(section)}}}")
        for path in tables_.get(section, []):
            lines += ["\\begin{table}[H]\\centering\\small"
                      "\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{%",
                      f"\\input{{{path}}}}}", f"\\caption*{{\\texttt{{{tables.latex_text(path)}}}}}", "\\end{table}"]
        for path in figures.get(section, []):
            lines += ["\\begin{figure}[H]\\centering", f"\\includegraphics[width=0.8\\linewidth]{{{path}}}",
                      f"\\caption*{{\\texttt{{{tables.latex_text(path)}}}}}", "\\end{figure}"]
    lines.append("\\end{document}")
    return "\n".join(lines) + "\n"


# The paper section each generated table and figure belongs to, by file-name prefix.
PRODUCT_SECTIONS = [
    ("Section 5", ("table2", "figure1", "classification", "nuclear_reference", "second_size", "init_scale",
                   "lr_sensitivity", "table6")),
    ("Section 6", ("table3", "d5", "figure2", "table9")),
    ("Section 7", ("dial",)),
    ("Section 8", ("phase",)),
    ("App. D.9", ("table11", "dial_gpu")),
    ("App. D.10", ("signum_audit", "signum_diagnostics")),
    ("Beyond the paper", ("diagnose", "census", "merge_extension")),
]


def by_section(paths: list[str]) -> dict[str, list[str]]:
    """Paths grouped by paper section (PRODUCT_SECTIONS: the longest prefix a name starts with, so
    dial_gpu is App. D.9's, not the dial's), in their given order; others last."""
    out: dict[str, list[str]] = {section: [] for section, _ in PRODUCT_SECTIONS}
    for path in paths:
        stem = path.rsplit("/", 1)[-1]
        found = [(len(prefix), s) for s, prefixes in PRODUCT_SECTIONS for prefix in prefixes if stem.startswith(prefix)]
        section = max(found)[1] if found else "Other"
        out.setdefault(section, []).append(path)
    return {s: p for s, p in out.items() if p}
