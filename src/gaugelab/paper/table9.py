"""Table 9 from the float64 twin records (spec: attention.md §9.6, §11.3, §12.3).

Two kinds of record feed it: the step-1 subset (steps 0 and 1 of every pair, always present) and
the full-length runs (where they exist; GPU jobs). Step columns come from the subset, final and
per-head columns from the full runs; a row without full runs prints "--" there. Nothing is typed
in: every number is read from the records, and published values only reach the comparison.
"""

from __future__ import annotations

import math

import pandas as pd

from . import compare, published
from ..optim import cards
from ..attention.configs import CONFIGS, LABELS, SHORT
from .tables import _html_table, drift_text, latex_text

ORDER = cards.table9_order()  # Table 9's row order
TWIN_ORDER = ("gauge", "noise", "identity")
EQUIVARIANT = tuple(o for o in cards.twin_optimizers() if cards.card(o).equivariant)
MOD97 = ("f64-mod97-L4d128h8", "f64-mod97-L6d256h8")
TEXT = "f64-text-L6d256h8"
ADAM_GAUGE_PAIRS = 6  # {42, 43} x {777, 888, 999} (§10.4): a published range or ratio needs them all
COLLAPSED = "f64-mod97-L6d256h8"  # SGD (lr 0.5) and scalar-Adam (lr 3e-3) do not train there (pitfall 14)


def drift_at(rec: dict, step: int) -> float:
    for s, d, *_ in rec["curve"]:
        if s == step:
            return float(d)
    return math.nan


def cell(values: list[float]) -> str:
    """One record: its value; several: ``lo–hi`` in %.1e (even when lo = hi); exact 0 as 0."""
    values = [v for v in values if v == v]
    if not values:
        return "--"
    if len(values) == 1:
        return drift_text(values[0])
    return f"{drift_text(min(values))}–{drift_text(max(values))}"


def _key(rec: dict) -> tuple:
    return (rec["optimizer"], rec["twin"], rec["init_seed"], rec["twin_seed"], float(rec["sigma"]))


def rows(step1: list[dict], full: list[dict]) -> pd.DataFrame:
    """One row per (configuration, optimizer, twin) group, in Table 9's order, with the raw lists
    behind each cell: step-0 and step-1 drift (subset), final drift and per-head max (full runs)."""
    out = []
    for name in CONFIGS:
        sub = [r for r in step1 if r["config"] == name]
        if not sub:
            continue
        runs = {_key(r): r for r in full if r["config"] == name}
        for opt in ORDER:
            for twin in TWIN_ORDER:
                group = sorted((r for r in sub if r["optimizer"] == opt and r["twin"] == twin),
                               key=lambda r: (r["sigma"], r["init_seed"], r["twin_seed"]))
                if not group:
                    continue
                sigmas = sorted({float(r["sigma"]) for r in group})
                label = f"noise@[{', '.join(f'{s:g}' for s in sigmas)}]" if twin == "noise" else twin
                done = [runs[_key(r)] for r in group if _key(r) in runs]
                out.append({
                    "config": name, "block": LABELS[name], "optimizer": opt, "twin": twin, "label": label,
                    "pairs": len(group), "full_pairs": len(done),
                    "step0": [drift_at(r, 0) for r in group], "step1": [drift_at(r, 1) for r in group],
                    "final": [float(r["curve"][-1][1]) for r in done],
                    "per_head_max": [max(r["per_head_final"]) for r in done],
                    "status": sorted({r["status"] for r in done}),
                })
    return pd.DataFrame(out)


def ratio_t9(step1: list[dict], name: str) -> float:
    """§9.6: min over the Adam gauge records of drift(1) ÷ drift(1) of the Adam noise record with
    the largest σ."""
    sub = [r for r in step1 if r["config"] == name and r["optimizer"] == cards.ADAM]
    gauge = [drift_at(r, 1) for r in sub if r["twin"] == "gauge"]
    noise = [r for r in sub if r["twin"] == "noise"]
    if not gauge or not noise:
        return math.nan
    loudest = max(noise, key=lambda r: float(r["sigma"]))
    return min(gauge) / drift_at(loudest, 1)


HEADER = ["optimizer", "twin", "pairs", "step 0", "step 1", "final", "per-head max"]


def _body(table: pd.DataFrame, name: str) -> list[list[str]]:
    block = table[table["config"] == name]
    body = []
    for _, r in block.iterrows():
        pairs = f"{r['pairs']}" if r["full_pairs"] in (0, r["pairs"]) else f"{r['pairs']} ({r['full_pairs']} full)"
        final = cell(r["final"]) if r["full_pairs"] else "--"
        if "nonfinite" in r["status"]:
            final += " (nonfinite)"
        body.append([cards.short(r["optimizer"]), r["label"], pairs, cell(r["step0"]), cell(r["step1"]),
                     final, cell(r["per_head_max"]) if r["full_pairs"] else "--"])
    return body


def _notes(table: pd.DataFrame, step1: list[dict], name: str) -> list[str]:
    ratio = ratio_t9(step1, name)
    notes = [f"conservative structural ratio (step 1): {ratio:.0f}×" if math.isfinite(ratio)
             else "conservative structural ratio (step 1): --"]
    block = table[table["config"] == name]
    if not block["full_pairs"].any():
        notes.append("final and per-head columns: no full-length runs yet (GPU target 'gpu')")
    if name == COLLAPSED:
        notes.append("SGD (lr 0.5) and scalar-Adam (lr 3e-3) do not train at 6L/d256: their final cells "
                     "describe collapsed models; only their step-1 values mean anything")
    return notes


def latex(table: pd.DataFrame, step1: list[dict]) -> str:
    width = len(HEADER)
    lines = ["% Table 9 (float64 twins), generated from the workflow's run records. Do not edit.",
             f"\\begin{{tabular}}{{ll{'r' * (width - 2)}}}", "\\toprule", " & ".join(HEADER) + " \\\\"]
    for name in dict.fromkeys(table["config"]):
        lines += ["\\midrule", f"\\multicolumn{{{width}}}{{l}}{{attention {LABELS[name]}}} \\\\", "\\midrule"]
        lines += [" & ".join(latex_text(c) for c in row) + " \\\\" for row in _body(table, name)]
        lines += [f"\\multicolumn{{{width}}}{{l}}{{\\footnotesize {latex_text(n)}}} \\\\"
                  for n in _notes(table, step1, name)]
    lines += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(lines) + "\n"


def html(table: pd.DataFrame, step1: list[dict]) -> str:
    rows_, classes = [], []
    for name in dict.fromkeys(table["config"]):
        rows_.append([f"attention {LABELS[name]}"] + [""] * (len(HEADER) - 1))
        classes.append("block")
        rows_ += _body(table, name)
        classes += [""] * len(_body(table, name))
        rows_ += [[n] + [""] * (len(HEADER) - 1) for n in _notes(table, step1, name)]
        classes += ["note"] * len(_notes(table, step1, name))
    return _html_table(HEADER, rows_, "Table 9: relative logit distance between float64 twins", classes)


# --- published versus reproduced ---------------------------------------------------------------


def quantities(step1: list[dict], full: list[dict]) -> dict[tuple, compare.Found]:
    """The reproduced counterpart of every Table 9 value whose records exist."""
    Found = compare.Found
    found = {}
    for name, short in SHORT.items():
        sub = [r for r in step1 if r["config"] == name]
        if not sub:
            continue
        adam = [drift_at(r, 1) for r in sub if r["optimizer"] == cards.ADAM and r["twin"] == "gauge"]
        if len(adam) < ADAM_GAUGE_PAIRS:  # the published ranges and ratios are over six pairs
            continue
        found[("Table 9", f"{short} Adam gauge", "step1_min")] = Found(min(adam), f"step 1, {len(adam)} pairs")
        found[("Table 9", f"{short} Adam gauge", "step1_max")] = Found(max(adam), f"step 1, {len(adam)} pairs")
        ratio = ratio_t9(step1, name)
        if math.isfinite(ratio):
            found[("Table 9", short, "ratio_t9")] = Found(ratio, "step 1")
    for row, names in (("mod-97 equivariant gauge", MOD97), ("char-LM equivariant gauge", (TEXT,))):
        eq = [drift_at(r, 1) for r in step1 if r["config"] in names and r["optimizer"] in EQUIVARIANT
              and r["twin"] == "gauge"]
        if eq:
            found[("Table 9", row, "step1_max")] = Found(max(eq), f"step 1, {len(eq)} pairs")
    gaps = {}
    for name in MOD97:
        sub = [r for r in step1 if r["config"] == name and r["twin"] == "gauge"]
        adam = [drift_at(r, 1) for r in sub if r["optimizer"] == cards.ADAM]
        eq = [drift_at(r, 1) for r in sub if r["optimizer"] in EQUIVARIANT]
        if adam and eq:
            gaps[SHORT[name]] = math.log10(min(adam) / max(eq)) if max(eq) > 0 else math.inf
    if len(gaps) == len(MOD97):
        found[("Section 6", "mod-97 equivariant vs Adam", "decades_1")] = Found(
            min(gaps.values()), "; ".join(f"{k}: {v:.2f}" for k, v in gaps.items()))
    ident = [r for r in step1 + full if r["twin"] == "identity"]
    if ident:
        worst = max(max(abs(p[1]), abs(p[2])) for r in ident for p in r["curve"])
        found[("Table 9", "identity twins", "max_drift")] = Found(worst, f"{len(ident)} records, every checkpoint")
    found.update(_full_length(full))
    found.update(_logged(step1, full))
    return found


# The summary's rows (published.TABLE9_LOGGED) by the pairs they are read from: optimizer, twin and
# sigma (None: every sigma).
_LOGGED_ROWS = {"Adam gauge": (cards.ADAM, "gauge", None), "Adam noise 1e-7": (cards.ADAM, "noise", 1e-7),
                "Adam noise 1e-5": (cards.ADAM, "noise", 1e-5), "Adam noise": (cards.ADAM, "noise", None),
                "scalar-Adam gauge": (cards.SCALAR_ADAM, "gauge", None),
                "scalar-Adam noise": (cards.SCALAR_ADAM, "noise", None),
                "Muon gauge": (cards.MUON, "gauge", None), "Muon noise": (cards.MUON, "noise", None),
                "SGD gauge": (cards.SGD, "gauge", None), "SGD noise": (cards.SGD, "noise", None),
                "SGD": (cards.SGD, None, None)}


def _logged(step1: list[dict], full: list[dict]) -> dict[tuple, compare.Found]:
    """The released summary's values (published.TABLE9_LOGGED) that the records give: step-1
    values from the step-1 subset, finals and per-head maxima from the full-length runs. A single
    logged number over several pairs is read as the pair farthest from it."""
    by_short = {short: name for name, short in SHORT.items()}
    found = {}
    for v in published.TABLE9_LOGGED:
        short, label = v.row.split(" ", 1)
        optimizer, twin, sigma = _LOGGED_ROWS[label]
        source = step1 if v.quantity.startswith("step1") else full
        recs = [r for r in source if r["config"] == by_short[short] and r["optimizer"] == optimizer
                and twin in (None, r["twin"]) and (sigma is None or r["sigma"] == sigma)]
        if not recs:
            continue
        what = v.quantity.rsplit("_", 1)[0] if v.quantity.endswith(("_min", "_max")) else v.quantity
        values = [_logged_value(r, what) for r in recs]
        values = [x for x in values if x == x]
        if not values:
            continue
        if v.quantity.endswith("_min"):
            value = min(values)
        elif v.quantity.endswith("_max") and what != "per_head":
            value = max(values)
        else:
            value = max(values, key=lambda x: _distance(v, x))
        at = "step 1" if what == "step1" else "final step"
        found[v.key] = compare.Found(value, f"{at}, {len(values)} record(s)")
    return found


def _logged_value(rec: dict, what: str) -> float:
    if what == "step1":
        return drift_at(rec, 1)
    if what == "final":
        return float(rec["curve"][-1][1])
    if what == "per_head_max":
        return max(rec["per_head_final"])
    if what == "acc_final":
        return max((rec["acc1"], rec["acc2"]), key=lambda a: abs(a - 1 / 97))
    if what == "train_loss_final":
        return max((rec["train_loss1"], rec["train_loss2"]), key=lambda x: abs(x - math.log(97)))
    raise ValueError(f"no reading for {what!r}")


def _distance(v: published.Value, x: float) -> float:
    """How far ``x`` is from a published value, as its kind measures it."""
    if v.kind == "decades":
        return abs(math.log10(x / v.value)) if x > 0 and v.value > 0 else math.inf
    if v.kind == "between":
        return abs(x - (v.tolerance + v.upper) / 2)
    return abs(x - v.value)


def _full_length(full: list[dict]) -> dict[tuple, compare.Found]:
    """The values only the full-length runs give (G5, G8, G9 and the late-time claims)."""
    Found = compare.Found
    found = {}
    finals = {name: [r for r in full if r["config"] == name and r["optimizer"] == cards.ADAM and r["twin"] == "gauge"]
              for name in CONFIGS}
    mod97 = [float(r["curve"][-1][1]) for name in MOD97 for r in finals[name]]
    if len(mod97) >= len(MOD97) * ADAM_GAUGE_PAIRS:
        found[("Table 9", "mod-97 Adam gauge", "final_min")] = Found(min(mod97), f"final, {len(mod97)} pairs")
        found[("Table 9", "mod-97 Adam gauge", "final_max")] = Found(max(mod97), f"final, {len(mod97)} pairs")
    text = [float(r["curve"][-1][1]) for r in finals[TEXT]]
    if len(text) >= ADAM_GAUGE_PAIRS:
        found[("Table 9", "char-LM Adam gauge", "final_min")] = Found(min(text), f"final, {len(text)} pairs")
        found[("Table 9", "char-LM Adam gauge", "final_max")] = Found(max(text), f"final, {len(text)} pairs")
    for r in finals[TEXT]:
        if (r["init_seed"], r["twin_seed"]) == (42, 777):
            for q in ("val_loss1", "val_loss2"):
                found[("Section 6", "char-LM Adam gauge (42, 777)", q)] = Found(float(r[q]), f"step {r['steps_done']}")
    sgd = [r for r in full if r["config"] == COLLAPSED and r["optimizer"] == cards.SGD]
    if sgd:
        found[("Section 6", "6L/d256 SGD", "val_acc")] = Found(max(max(r["acc1"], r["acc2"]) for r in sgd),
                                                               f"max over {len(sgd)} SGD records, both copies")
    landed = []
    for r in full:
        if r["optimizer"] == cards.ADAM or r["twin"] != "gauge" or not float(r["curve"][-1][1]) > 1e-6:
            continue
        noises = [n for n in full if n["config"] == r["config"] and n["optimizer"] == r["optimizer"]
                  and n["twin"] == "noise" and n["init_seed"] == r["init_seed"]]
        for n in noises:
            landed.append(abs(math.log10(float(r["curve"][-1][1]) / max(float(n["curve"][-1][1]), 1e-300))))
    if landed:
        found[("Section 6", "separated twins vs own noise twin", "decades")] = Found(
            max(landed), f"max over {len(landed)} (separated gauge, noise) pairs")
    return found


def comparison(step1: list[dict], full: list[dict]) -> pd.DataFrame:
    return compare.rows(published.table9(), quantities(step1, full))


def published_range(short: str, quantity: str = "step1") -> tuple[float, float, float, float]:
    """(min, max, tol_min, tol_max) of a published Adam-gauge range (tests read bounds here)."""
    lo = published.lookup("Table 9", f"{short} Adam gauge", f"{quantity}_min")
    hi = published.lookup("Table 9", f"{short} Adam gauge", f"{quantity}_max")
    return lo.value, hi.value, lo.tolerance, hi.tolerance
