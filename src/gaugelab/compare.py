"""Published versus reproduced, with a verdict per number.

``exact``: within the published value's tolerance. ``within measured sensitivity``: further off,
but by no more than the tolerance plus how far the same cell moves when its initial factors are
perturbed by ~1e-7 (measured by this workflow's sensitivity reruns). ``differs``: anything else.
A selection whose margin is smaller than the measured sensitivity of the cells it compares is
flagged as a near-tie.
"""

from __future__ import annotations

import math
import re

import pandas as pd

from . import dial as dial_arms
from . import published, select, tables

EXACT, WITHIN, DIFFERS = "exact", "within measured sensitivity", "differs"
COLUMNS = ["source", "row", "quantity", "published", "published_value", "reproduced", "at",
           "abs_diff", "tolerance", "sensitivity", "verdict", "note"]


def sensitivity(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (method, lr) cell: the largest per-seed change of rec and erank under a perturbation.

    A cell without perturbed runs has NaN sensitivity; a perturbed run that diverges where the
    base did not has infinite sensitivity.
    """
    base = runs[runs["perturbation"] == 0].set_index(["method", "lr", "seed"])
    moved = runs[runs["perturbation"] != 0]
    rows = []
    for (method, lr), group in moved.groupby(select.CELL, sort=False):
        change = {"rec": 0.0, "erank": 0.0}
        for _, run in group.iterrows():
            ref = base.loc[(method, lr, run["seed"])]
            for q in change:
                d = abs(run[q] - ref[q])
                change[q] = max(change[q], d if math.isfinite(d) else math.inf)
        rows.append({"method": method, "lr": lr, "sens_rec": change["rec"], "sens_erank": change["erank"]})
    return pd.DataFrame(rows, columns=["method", "lr", "sens_rec", "sens_erank"])


def verdict(published_value: float, reproduced: float, tolerance: float, sens: float) -> str:
    if not math.isfinite(reproduced):
        return DIFFERS
    diff = abs(reproduced - published_value)
    if diff <= tolerance * (1 + 1e-9) or (tolerance == 0 and math.isclose(reproduced, published_value, rel_tol=1e-12)):
        return EXACT
    if math.isfinite(sens) and diff <= tolerance + sens:
        return WITHIN
    return DIFFERS


def _sens(table: pd.DataFrame, method: str, lr: float, q: str = "rec") -> float:
    hit = table[(table["method"] == method) & (table["lr"] == lr)]
    return float(hit[f"sens_{q}"].iloc[0]) if len(hit) else math.nan


def table2(summary: pd.DataFrame, runs: pd.DataFrame) -> pd.DataFrame:
    """Comparison rows for Table 2's published values (summary: scored cells; runs: base and
    perturbed per-seed runs)."""
    sens = sensitivity(runs)
    cells = summary.set_index(select.CELL)
    rows = []
    selected = summary[summary["selected"]].set_index("method")
    for method in dict.fromkeys(v.row for v in published.TABLE2):
        if method not in selected.index:
            continue
        pub_lr = published.lookup("Table 2", method, "lr").value
        chosen = selected.loc[method]
        lr = float(chosen["lr"])
        if lr == pub_lr:
            other = chosen["runner_up_lr"]
            margin = chosen["margin"]
        else:
            other = pub_lr
            margin = cells.loc[(method, pub_lr), "score"] - chosen["score"] if (method, pub_lr) in cells.index else math.nan
        decided_by = _sens(sens, method, lr) + (_sens(sens, method, other) if math.isfinite(other) else 0.0)
        near_tie = bool(math.isfinite(margin) and math.isfinite(decided_by) and margin < decided_by)
        note = (f"near-tie: lr {lr:g} beats lr {other:g} by {margin:.2e} < sensitivity {decided_by:.2e}"
                if near_tie else "")
        v = published.lookup("Table 2", method, "lr")
        lr_verdict = EXACT if lr == pub_lr else (WITHIN if near_tie else DIFFERS)
        rows.append(_row(v, lr, f"S1 over {len(summary[summary['method'] == method])} lrs",
                         abs(lr - pub_lr), math.nan, note, lr_verdict))
        at = pub_lr if (lr != pub_lr and near_tie and (method, pub_lr) in cells.index) else lr
        for q in ("rec", "erank"):
            v = published.lookup("Table 2", method, q)
            value = float(cells.loc[(method, at), q])
            s = _sens(sens, method, at, q)
            rows.append(_row(v, value, f"lr {at:g}", abs(value - v.value), s,
                             "compared at the published lr (near-tie)" if at != lr else "",
                             verdict(v.value, value, v.tolerance, s)))
    chosen_rows = summary[summary["selected"]]
    split = select.clean_split(chosen_rows)
    v = published.lookup("Table 2", "clean split", "count")
    rows.append(_row(v, split["correct"], f"{split['verdict']} over {split['total']} methods",
                     abs(split["correct"] - v.value), math.nan, "", verdict(v.value, split["correct"], 0, math.nan)))
    v = published.lookup("Table 2", "clean split", "gap")
    edge = chosen_rows.set_index("method")
    gap_sens = math.nan
    if split["verdict"] == "CLEAN":
        eq_m = edge.index[edge["rec"] == split["eq_max"]][0]
        cw_m = edge.index[edge["rec"] == split["cw_min"]][0]
        gap_sens = _sens(sens, eq_m, edge.loc[eq_m, "lr"]) + _sens(sens, cw_m, edge.loc[cw_m, "lr"])
    rows.append(_row(v, split["gap"], "cw_min - eq_max", abs(split["gap"] - v.value), gap_sens, "",
                     verdict(v.value, split["gap"], v.tolerance, gap_sens)))
    rank = select.rank_split(chosen_rows)
    v = published.lookup("Table 2", "rank split", "count")
    rows.append(_row(v, rank["correct"], f"threshold {rank['threshold']:.2f}",
                     abs(rank["correct"] - v.value), math.nan, "", verdict(v.value, rank["correct"], 0, math.nan)))
    return pd.DataFrame(rows, columns=COLUMNS)


def _row(v: published.Value, reproduced, at: str, diff, sens, note: str, verdict_: str) -> dict:
    return {"source": v.source, "row": v.row, "quantity": v.quantity, "published": v.printed,
            "published_value": v.value, "reproduced": reproduced, "at": at, "abs_diff": diff,
            "tolerance": v.tolerance, "sensitivity": sens, "verdict": verdict_, "note": note}


def macro_name(*parts: str) -> str:
    """A LaTeX command name from words: letters only (digits spelled out)."""
    digits = "Zero One Two Three Four Five Six Seven Eight Nine".split()
    text = " ".join(parts)
    text = re.sub(r"\d", lambda m: f" {digits[int(m.group())]} ", text)
    return "Repro" + "".join(w.capitalize() for w in re.split(r"[^A-Za-z]+", text) if w)


def macros(comparison: pd.DataFrame) -> str:
    """``\\newcommand`` per reproduced number, for a manuscript to ``\\input``."""
    lines = ["% Reproduced values, generated by the workflow from its run records. Do not edit."]
    for _, r in comparison.iterrows():
        value = r["reproduced"]
        if r["quantity"] == "lr":
            text = f"{value:g}"
        elif r["quantity"] in ("count", "monotone"):
            text = f"{int(value)}"
        elif r["quantity"] == "erank":
            text = f"{value:.2f}"
        elif math.isfinite(value) and tables.twin_quantity_text(value, r["quantity"]) is not None:
            text = tables.twin_quantity_text(value, r["quantity"])
        else:
            text = f"{value:.4f}" if math.isfinite(value) else "--"
        lines.append(f"\\newcommand{{\\{macro_name(r['source'], r['row'], r['quantity'])}}}{{{text}}}")
    return "\n".join(lines) + "\n"


def dial(envelope: pd.DataFrame) -> pd.DataFrame:
    """Section 7's published endpoints of the tuned envelope and its monotonicity (RMS)."""
    rows = []
    by_variant = envelope.drop_duplicates("variant").set_index("variant")
    for v in published.DIAL:
        if v.quantity == "monotone":
            rms = envelope[envelope["convention"] == v.row]
            ok = select_monotone(rms)
            rows.append(_row(v, float(ok), "rec and erank, p = 1 to 0", abs(float(ok) - v.value), math.nan,
                             "", EXACT if ok else DIFFERS))
            continue
        if v.row not in by_variant.index:
            continue
        row = by_variant.loc[v.row]
        value = float(row[v.quantity])
        rows.append(_row(v, value, f"lr {row['lr']:g}", abs(value - v.value), math.nan, "",
                         verdict(v.value, value, v.tolerance, math.nan)))
    return pd.DataFrame(rows, columns=COLUMNS)


def select_monotone(rows: pd.DataFrame) -> bool:
    """rec and erank of an envelope both non-increasing from p = 1 to p = 0."""
    ordered = rows.sort_values("p", ascending=False)
    return dial_arms.monotone(list(ordered["rec"])) and dial_arms.monotone(list(ordered["erank"]))


def nuclear(reference: pd.DataFrame) -> pd.DataFrame:
    """Table 2's convex reference row: the mean over seeds (controls.nuclear_summary)."""
    mean = reference[reference["seed"].astype(str) == "mean"].iloc[0]
    at = f"mean of {len(reference) - 1} seeds, float64 ADMM"
    return pd.DataFrame([_row(v, float(mean[v.quantity]), at, abs(float(mean[v.quantity]) - v.value), math.nan, "",
                              verdict(v.value, float(mean[v.quantity]), v.tolerance, math.nan))
                         for v in published.NUCLEAR], columns=COLUMNS)


def second_size(summary: pd.DataFrame, tol: float) -> pd.DataFrame:
    """Section 5's 60x60 check: each method's S2-selected recovery."""
    chosen = summary[summary["selected"]].set_index("method")
    rows = []
    for v in published.SECOND_SIZE:
        if v.row not in chosen.index:
            continue
        r = chosen.loc[v.row]
        note = "" if r["train"] < tol else "selected row did not interpolate"
        rows.append(_row(v, float(r["rec"]), f"lr {r['lr']:g} (S2)", abs(float(r["rec"]) - v.value), math.nan, note,
                         verdict(v.value, float(r["rec"]), v.tolerance, math.nan)))
    return pd.DataFrame(rows, columns=COLUMNS)


def schedule(table: pd.DataFrame) -> pd.DataFrame:
    """The decay control (Table 6) and RMSProp's rows (App. D.7) from the scored cells of every
    mode and rule (controls.schedule)."""
    def chosen(mode: str, rule: str) -> pd.DataFrame:
        return table[(table["mode"] == mode) & (table["rule"] == rule) & table["selected"]]

    def rmsprop_row(mode: str, rule: str):
        hit = chosen(mode, rule)
        return hit[hit["method"] == "rmsprop"].iloc[0] if (hit["method"] == "rmsprop").any() else None

    rows = []
    for v in published.SCHEDULE:
        if v.quantity == "count" and v.row.startswith("midpoint"):
            picked = chosen("decay", "rec-sel")
            split = select.midpoint_split(picked)
            if not split["total"]:
                continue
            rows.append(_row(v, split["correct"], f"of {split['total']}, mid {split['threshold']:.4f}",
                             abs(split["correct"] - v.value), math.nan, "", verdict(v.value, split["correct"], 0, math.nan)))
        elif v.quantity == "count":
            mode = v.row.split()[-1]
            cells = table[(table["mode"] == mode) & (table["rule"] == "rec-sel") & (table["method"] == "rmsprop")]
            if not len(cells):
                continue
            reached = int(cells["gated"].sum())
            rows.append(_row(v, reached, f"of {len(cells)} lrs", abs(reached - v.value), math.nan, "",
                             verdict(v.value, reached, 0, math.nan)))
        else:
            mode, rule = v.row.split()[1:3]
            r = rmsprop_row(mode, rule)
            if r is None:
                continue
            note = "floor: the selected row did not interpolate" if r["floor"] else ""
            rows.append(_row(v, float(r["rec"]), f"lr {r['lr']:g}", abs(float(r["rec"]) - v.value), math.nan, note,
                             verdict(v.value, float(r["rec"]), v.tolerance, math.nan)))
    return pd.DataFrame(rows, columns=COLUMNS)


def judge(v: published.Value, reproduced: float) -> str:
    """The verdict of a value whose tolerance is read by its kind (published.Value.kind)."""
    if not math.isfinite(reproduced) and not (v.kind == "at_least" and reproduced == math.inf):
        return DIFFERS
    if v.kind == "decades":
        ok = reproduced > 0 and abs(math.log10(reproduced / v.value)) <= v.tolerance
    elif v.kind == "at_least":
        ok = reproduced >= v.tolerance
    elif v.kind == "at_most":
        ok = reproduced <= v.tolerance
    else:
        return verdict(v.value, reproduced, v.tolerance, math.nan)
    return EXACT if ok else DIFFERS


REQUIREMENT = {"decades": "order of magnitude: within {t:g} decade(s)", "at_least": "requirement: >= {t:g}",
               "at_most": "requirement: <= {t:g}"}


def twins(summary: pd.DataFrame, sets: dict) -> pd.DataFrame:
    """Section 6 (Table 3, Figure 2) and Appendix D.5 published values beside the reproduced ones.

    ``summary``: twin_summary.frame of the records; ``sets``: the config's run sets as pairs.
    A value whose pairs are not configured is left out.
    """
    from .twin_summary import published_quantities

    found = published_quantities(summary, sets)
    rows = []
    for v in published.twins():
        if (v.source, v.row, v.quantity) not in found:
            continue
        value, at = found[(v.source, v.row, v.quantity)]
        diff = abs(value - v.value) if math.isfinite(value) else math.nan
        note = REQUIREMENT.get(v.kind, "").format(t=v.tolerance)
        rows.append(_row(v, value, at, diff, math.nan, note, judge(v, value)))
    return pd.DataFrame(rows, columns=COLUMNS)
