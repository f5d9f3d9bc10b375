"""The reproduced counterpart of every published matrix-sensing value (Table 2, Section 5's
controls, Section 7's dial), read from the families' summaries and run records.

Each function returns {published key: compare.Found}; compare.rows gives the verdicts. A cell's
sensitivity is the largest per-seed change of its rec (or erank) when its initial factors are
perturbed (:func:`sensitivity`, from the sensitivity reruns; NaN where none were run). A chaotic
cell (:func:`chaotic_cells`) is rerun under several perturbations (the ensemble, rule
sensing_ensemble): its seed mean under each is one draw of what the paper's run could have given,
and compare.verdict reads the published value against those draws.
"""

from __future__ import annotations

import math

import pandas as pd

from . import published
from .compare import DIFFERS, EXACT, WITHIN, Found, near_tie
from ..optim import cards
from ..sensing import controls, select
from ..sensing import dial as dial_arms


def sensitivity(runs: pd.DataFrame) -> pd.DataFrame:
    """Per (method, lr) cell: the largest per-seed change of rec and erank under a perturbation,
    and, where every seed of the cell was rerun under at least two perturbations (the ensemble),
    the cell's seed mean unperturbed and under each perturbation (``ens_rec``, ``ens_erank``:
    tuples, the unperturbed first; empty elsewhere).

    A cell without perturbed runs has no row; a perturbed run that diverges where the base did not
    has infinite sensitivity.
    """
    base = runs[runs["perturbation"] == 0].set_index(["method", "lr", "seed"]).sort_index()
    moved = runs[runs["perturbation"] != 0]
    rows = []
    for (method, lr), group in moved.groupby(select.CELL, sort=False):
        change = {"rec": 0.0, "erank": 0.0}
        for _, run in group.iterrows():
            ref = base.loc[(method, lr, run["seed"])]
            for q in change:
                d = abs(run[q] - ref[q])
                change[q] = max(change[q], d if math.isfinite(d) else math.inf)
        rows.append({"method": method, "lr": lr, "sens_rec": change["rec"], "sens_erank": change["erank"],
                     **_ensemble(base.loc[(method, lr)], group)})
    return pd.DataFrame(rows, columns=["method", "lr", "sens_rec", "sens_erank", "ens_rec", "ens_erank"])


def _ensemble(base: pd.DataFrame, moved: pd.DataFrame) -> dict:
    """The seed means of one cell, unperturbed and under each perturbation every seed has."""
    seeds = set(base.index)
    full = [d for d, runs in moved.groupby("perturbation") if set(runs["seed"]) == seeds]
    if len(full) < 2:
        return {"ens_rec": (), "ens_erank": ()}
    per = moved[moved["perturbation"].isin(full)].groupby("perturbation")
    return {f"ens_{q}": (float(base[q].mean()), *(float(per.get_group(d)[q].mean()) for d in full))
            for q in ("rec", "erank")}


def _sens(table: pd.DataFrame | None, method: str, lr: float, q: str = "rec") -> float:
    if table is None:
        return math.nan
    hit = table[(table["method"] == method) & (table["lr"] == lr)]
    return float(hit[f"sens_{q}"].iloc[0]) if len(hit) else math.nan


def spread(table: pd.DataFrame | None, method: str, lr: float, q: str = "rec") -> dict:
    """What a Found of one cell's ``q`` carries of its perturbed reruns: the sensitivity and the
    ensemble (compare.Found)."""
    if table is None or q not in ("rec", "erank"):
        return {"sensitivity": math.nan}
    hit = table[(table["method"] == method) & (table["lr"] == lr)]
    if not len(hit):
        return {"sensitivity": math.nan}
    return {"sensitivity": float(hit[f"sens_{q}"].iloc[0]), "ensemble": tuple(hit[f"ens_{q}"].iloc[0])}


def bundle_identity(experiment: str, exp: dict, shard: int, shards: int, seeds: list[int],
                    perturbations: list[float], dtype: str, chaotic: float | None = None) -> tuple[dict, dict]:
    """What a sensitivity bundle is and the settings it depends on (records.write_bundle): which
    cells it reruns follows from the experiment's runs and the rule that picks them
    (:func:`rerun_rule`; an ensemble's, also from the first reruns and the ``chaotic`` threshold),
    so a bundle made under another rule is set aside, not read as this one."""
    what = {"experiment": experiment, "shard": int(shard), "shards": int(shards)}
    settings = {"experiment": exp, "seeds": list(seeds), "perturbations": list(perturbations), "dtype": dtype,
                "cells": rerun_rule(experiment)}
    if chaotic is not None:
        what["ensemble"], settings["chaotic"] = True, float(chaotic)
    return what, settings


def ensemble_perturbations(perturbations: list[float], size: int) -> list[float]:
    """The perturbations an ensemble of ``size`` adds to the first reruns': k times the first one
    for k = 2 .. size (one the first reruns already have is not repeated)."""
    return [d for d in (perturbations[0] * k for k in range(2, size + 1)) if d not in perturbations]


def chaotic_cells(runs: pd.DataFrame, cells: list[tuple[str, float]], above: float) -> list[tuple[str, float]]:
    """The cells among ``cells`` whose rec moves by more than ``above`` in some seed under the
    first perturbation: chaotic, so one rerun says little of their spread (the ensemble's cells)."""
    sens = sensitivity(runs)
    return [(m, lr) for m, lr in cells if _sens(sens, m, lr) > above]


def table2(summary: pd.DataFrame, runs: pd.DataFrame) -> dict:
    """Table 2 (summary: the S1-scored cells; runs: base and perturbed per-seed runs). A learning
    rate that differs from the published one is a near-tie when the selection's margin is below
    the measured sensitivity of the two cells it compares; rec, erank and the split counts are then
    read with that method at the published lr (the note says so, and what the selection gives)."""
    sens = sensitivity(runs)
    cells = summary.set_index(select.CELL)
    selected = summary[summary["selected"]].set_index("method")
    found = {}
    read_at = {}  # method -> the lr its compared values are read at, where not its selection's
    for method in dict.fromkeys(v.row for v in published.TABLE2):
        if method not in selected.index:
            continue
        pub_lr = published.lookup("Table 2", method, "lr").value
        chosen = selected.loc[method]
        lr = float(chosen["lr"])
        if lr == pub_lr:
            other, margin = chosen["runner_up_lr"], chosen["margin"]
        else:
            other = pub_lr
            margin = (cells.loc[(method, pub_lr), "score"] - chosen["score"] if (method, pub_lr) in cells.index
                      else math.nan)
        decided_by = _sens(sens, method, lr) + (_sens(sens, method, other) if math.isfinite(other) else 0.0)
        near_tie = bool(math.isfinite(margin) and math.isfinite(decided_by) and margin < decided_by)
        note = (f"near-tie: lr {lr:g} beats lr {other:g} by {margin:.2e} < sensitivity {decided_by:.2e}"
                if near_tie else "")
        found[("Table 2", method, "lr")] = Found(lr, f"S1 over {len(summary[summary['method'] == method])} lrs",
                                                 note=note,
                                                 verdict=EXACT if lr == pub_lr else (WITHIN if near_tie else DIFFERS))
        at = pub_lr if (lr != pub_lr and near_tie and (method, pub_lr) in cells.index) else lr
        if at != lr:
            read_at[method] = at
        for q in ("rec", "erank"):
            found[("Table 2", method, q)] = Found(float(cells.loc[(method, at), q]), f"lr {at:g}",
                                                  **spread(sens, method, at, q),
                                                  note="compared at the published lr (near-tie)" if at != lr else "")
    chosen_rows = summary[summary["selected"]]
    read_rows = _rows_read(summary, chosen_rows, read_at)
    split = select.clean_split(read_rows)
    found[("Table 2", "clean split", "count")] = Found(
        split["correct"], f"{split['verdict']} over {split['total']} methods",
        note=_read_note(read_at, select.clean_split(chosen_rows)["correct"], split["correct"]))
    edge = read_rows.set_index("method")
    gap_sens = math.nan
    if split["verdict"] == "CLEAN":
        eq_m = edge.index[edge["rec"] == split["eq_max"]][0]
        cw_m = edge.index[edge["rec"] == split["cw_min"]][0]
        gap_sens = _sens(sens, eq_m, edge.loc[eq_m, "lr"]) + _sens(sens, cw_m, edge.loc[cw_m, "lr"])
    found[("Table 2", "clean split", "gap")] = Found(split["gap"], "cw_min - eq_max", gap_sens)
    rank = select.rank_split(read_rows)
    found[("Table 2", "rank split", "count")] = Found(
        rank["correct"], f"threshold {rank['threshold']:.2f}",
        note=_read_note(read_at, select.rank_split(chosen_rows)["correct"], rank["correct"]))
    return found


def _rows_read(summary: pd.DataFrame, chosen_rows: pd.DataFrame, read_at: dict) -> pd.DataFrame:
    """The selected rows, each near-tie method's replaced by its row at the published lr."""
    kept = chosen_rows[~chosen_rows["method"].isin(read_at)]
    swapped = [summary[(summary["method"] == m) & (summary["lr"] == lr)] for m, lr in read_at.items()]
    return pd.concat([kept, *swapped], ignore_index=True)


def _read_note(read_at: dict, at_selection: int, read: int) -> str:
    """A split count's note where near-tie methods were read at the published lr."""
    if not read_at:
        return ""
    note = "near-tie: " + ", ".join(f"{m} read at the published lr {lr:g}" for m, lr in read_at.items())
    return note if read == at_selection else f"{note}; {at_selection} at the selection"


def nuclear(reference: pd.DataFrame) -> dict:
    """Table 2's convex reference row: the mean over seeds (controls.nuclear_summary)."""
    mean = reference[reference["seed"].astype(str) == "mean"].iloc[0]
    at = f"mean of {len(reference) - 1} seeds, float64 ADMM"
    return {v.key: Found(float(mean[v.quantity]), at) for v in published.NUCLEAR}


def second_size(summary: pd.DataFrame, tol: float, sens: pd.DataFrame | None = None) -> dict:
    """Section 5's 60x60 check: each method's S2-selected recovery."""
    chosen = summary[summary["selected"]].set_index("method")
    found = {}
    for v in published.SECOND_SIZE:
        if v.row in chosen.index:
            r = chosen.loc[v.row]
            note = "" if r["train"] < tol else "selected row did not interpolate"
            found[v.key] = Found(float(r["rec"]), f"lr {r['lr']:g} (S2)", **spread(sens, v.row, r["lr"]), note=note)
    for v in published.SECOND_SIZE_LOGGED:  # the released log's rows, to 4 decimals and the lr
        if v.row in chosen.index:
            r = chosen.loc[v.row]
            at = "selected (S2)" if v.quantity == "lr" else f"lr {r['lr']:g} (S2)"
            found[v.key] = Found(float(r[v.quantity]), at, **spread(sens, v.row, r["lr"], v.quantity))
    return found


def init_scale(rows: pd.DataFrame, checks: pd.DataFrame, sens: dict[float, pd.DataFrame] | None = None) -> dict:
    """App. D.4 (controls.init_scale's rows and checks): the S2 row per (init, method), each init's
    split check and gap, the edge lost at 1e-2, and the 1e-3 rows that are Table 2's."""
    sens = sens or {}
    found = {}
    by = {(float(r["init"]), r["method"]): r for _, r in rows.iterrows()}
    for (init, method), r in by.items():
        for q in ("rec", "erank"):
            key = ("App. D.4", published.init_row(init, method), q)
            found[key] = Found(float(r[q]), f"lr {r['lr']:g} (S2)", **spread(sens.get(init), method, r["lr"], q))
    for _, c in checks.iterrows():
        init = float(c["init"])
        row = f"init {init:g} split check"
        at = f"max equivariant {c['eq_max']:.4f}, Adam {c['adam_rec']:.4f}"
        found[("App. D.4", row, "holds")] = Found(1.0 if c["weak_check"] == "HOLDS" else 0.0, at)
        eq_method = next((m for (i, m), r in by.items()
                          if i == init and m != cards.ADAM and r["rec"] == c["eq_max"]), None)
        s = _sens(sens.get(init), cards.ADAM, by[(init, cards.ADAM)]["lr"]) if (init, cards.ADAM) in by else math.nan
        if eq_method is not None:
            s += _sens(sens.get(init), eq_method, by[(init, eq_method)]["lr"])
        found[("App. D.4", row, "gap")] = Found(float(c["adam_rec"] - c["eq_max"]), at, s)
    low, high = 1e-3, 1e-2
    methods = [m for m in published.INIT_METHODS if (low, m) in by and (high, m) in by]
    if len(methods) == len(published.INIT_METHODS):
        worse = all(by[(high, m)]["rec"] > by[(low, m)]["rec"] for m in methods if m != cards.MUON)
        muon = max(by[(low, cards.MUON)]["rec"], by[(high, cards.MUON)]["rec"])
        at = "; ".join(f"{m} {by[(low, m)]['rec']:.4f} -> {by[(high, m)]['rec']:.4f}" for m in methods)
        found[("App. D.4", "init 0.01 edge lost", "holds")] = Found(1.0 if worse and muon < 1e-3 else 0.0, at)
    same = rows[rows["as_table2"].astype(str) == "True"]
    at_zoo = rows[rows["as_table2"].astype(str).isin(["True", "False"])]
    if len(at_zoo):
        found[("App. D.4", "init 0.001 as Table 2", "count")] = Found(
            len(same), f"of {len(at_zoo)} rows at the zoo's init: lr and rec equal Table 2's")
    keys = {v.key for v in published.INIT_SCALE}  # a configured init or method the paper has no row for
    return {k: v for k, v in found.items() if k in keys}


def lr_sensitivity(table: pd.DataFrame, sens: pd.DataFrame | None = None) -> dict:
    """App. D.2: each method's flow-limit row (controls.lr_sensitivity)."""
    found = {}
    for method in dict.fromkeys(table["method"]):
        rows = table[table["method"] == method]
        flow = rows[rows["flow_limit"].astype(str) == "True"]
        prefix = ("App. D.2", f"{method} flow limit")
        if not len(flow):
            for q in ("lr", "rec", "erank"):
                found[(*prefix, q)] = Found(math.nan, "never interpolated on this grid")
            continue
        r = flow.iloc[0]
        at = f"smallest lr with mean train < tol of {len(rows)}"
        found[(*prefix, "lr")] = Found(float(r["lr"]), at)
        for q in ("rec", "erank"):
            found[(*prefix, q)] = Found(float(r[q]), f"lr {r['lr']:g}", **spread(sens, method, r["lr"], q))
    return {k: v for k, v in found.items() if k in {p.key for p in published.LR_SENSITIVITY}}


def schedule(table: pd.DataFrame, sens: dict[str, pd.DataFrame] | None = None) -> dict:
    """The decay control (Table 6) and RMSProp's rows (App. D.7) from the scored cells of every
    mode and rule (controls.schedule); ``sens``: mode -> sensitivity of that mode's cells."""
    sens = sens or {}

    def chosen(mode: str, rule: str) -> pd.DataFrame:
        return table[(table["mode"] == mode) & (table["rule"] == rule) & table["selected"]]

    found = {}
    for v in published.SCHEDULE:
        if v.quantity == "count" and v.row.startswith("midpoint"):
            split = select.midpoint_split(chosen("decay", "rec-sel"))
            if split["total"]:
                found[v.key] = Found(split["correct"], f"of {split['total']}, mid {split['threshold']:.4f}")
        elif v.quantity == "count":
            mode = v.row.split()[-1]
            cells = table[(table["mode"] == mode) & (table["rule"] == "rec-sel") & (table["method"] == cards.RMSPROP)]
            if len(cells):
                found[v.key] = Found(int(cells["gated"].sum()), f"of {len(cells)} lrs")
        elif v.quantity == "gain":
            method = v.row.split()[0]
            const, full = chosen("const", "rec-sel"), chosen("decay-full", "rec-sel")
            const, full = const[const["method"] == method], full[full["method"] == method]
            if len(const) and len(full):
                a, b = const.iloc[0], full.iloc[0]
                found[v.key] = Found(float(a["rec"] - b["rec"]),
                                     f"const lr {a['lr']:g}: {a['rec']:.4f}; decay-full lr {b['lr']:g}: {b['rec']:.4f}")
        else:
            mode, rule = v.row.split()[1:3]
            hit = chosen(mode, rule)
            hit = hit[hit["method"] == cards.RMSPROP]
            if len(hit):
                r = hit.iloc[0]
                note = "floor: the selected row did not interpolate" if r["floor"] else ""
                found[v.key] = Found(float(r["rec"]), f"lr {r['lr']:g}",
                                     **spread(sens.get(mode), cards.RMSPROP, r["lr"]), note=note)
    found.update(_schedule_logged(table, chosen, sens))
    return found


def _schedule_logged(table: pd.DataFrame, chosen, sens: dict[str, pd.DataFrame]) -> dict:
    """The decay control's released-log rows (published.SCHEDULE_LOGGED): every rec-sel cell, the
    midpoint counts with the methods that miss, the two const -> decay-full deltas, RMSProp at lr
    1e-4 in each arm."""
    found = {}
    for v in published.SCHEDULE_LOGGED:
        if v.source == "Table 6" and v.quantity == "count":
            mode, rule = v.row.removeprefix("midpoint split (").removesuffix(")").split(", ")
            rows = chosen(mode, rule)
            split = select.midpoint_split(rows)
            if split["total"]:
                misses = select.threshold_misses(rows.set_index("method")["rec"].items(), split["threshold"])
                found[v.key] = Found(split["correct"], f"of {split['total']}, mid {split['threshold']:.4f}; misses: "
                                     + (", ".join(misses) or "none"))
        elif v.quantity == "delta":  # rec-sel, decay-full minus const
            method = v.row.split()[0]
            cells = [chosen(mode, "rec-sel") for mode in ("const", "decay-full")]
            const, full = (c[c["method"] == method] for c in cells)
            if len(const) and len(full):
                a, b = const.iloc[0], full.iloc[0]
                found[v.key] = Found(float(b["rec"] - a["rec"]),
                                     f"const lr {a['lr']:g}: {a['rec']:.4f}; decay-full lr {b['lr']:g}: {b['rec']:.4f}")
        elif v.source == "Table 6":
            method, mode, rule = v.row.split()
            hit = chosen(mode, rule)
            hit = hit[hit["method"] == method]
            if len(hit):
                found[v.key] = _table6_cell(table, hit.iloc[0], v, sens.get(mode))
        else:  # App. D.7: RMSProp at lr 1e-4, read whatever the selection chose
            mode = v.row.split()[1]
            cells = table[(table["mode"] == mode) & (table["rule"] == "rec-sel") & (table["method"] == cards.RMSPROP)
                          & (table["lr"] == 1e-4)]
            if len(cells):
                r = cells.iloc[0]
                found[v.key] = Found(float(r[v.quantity]), "lr 1e-4", **spread(sens.get(mode), cards.RMSPROP, 1e-4,
                                                                                v.quantity))
    return found


def _table6_cell(table: pd.DataFrame, r: pd.Series, v, sens: pd.DataFrame | None) -> Found:
    """A Table 6 cell's ``v`` at its selection ``r``, or at the runner-up where the selection is a
    near tie decided within the selected cell's measured sensitivity (compare.near_tie)."""
    values = [w for w in published.SCHEDULE_LOGGED if w.source == v.source and w.row == v.row]
    note = "floor: the selected row did not interpolate" if r["floor"] else ""
    chosen = [Found(float(r[w.quantity]), f"lr {r['lr']:g}", **spread(sens, r["method"], r["lr"], w.quantity),
                    note=note) for w in values]
    other = table[(table["mode"] == r["mode"]) & (table["rule"] == r["rule"]) & (table["method"] == r["method"])
                  & (table["lr"] == r["runner_up_lr"])]
    runner_up = [Found(float(other[w.quantity].iloc[0]), f"lr {r['runner_up_lr']:g}") for w in values] if len(
        other) else chosen
    return near_tie(values, chosen, runner_up, r["margin"], _sens(sens, r["method"], r["lr"]))[values.index(v)]


def monotone(rows: pd.DataFrame) -> bool:
    """rec and erank of an envelope both non-increasing from p = 1 to p = 0."""
    ordered = rows.sort_values("p", ascending=False)
    return dial_arms.monotone(list(ordered["rec"])) and dial_arms.monotone(list(ordered["erank"]))


def dial(envelope: pd.DataFrame, fixed: pd.DataFrame | None = None, sens: pd.DataFrame | None = None) -> dict:
    """Section 7: the tuned envelope's rows (arm A), its monotonicity per convention, GEO against
    RMS at p = 0, and arm B's verdict per shared lr."""
    found = {}
    by_variant = envelope.drop_duplicates("variant").set_index("variant")
    for v in published.DIAL:
        if v.quantity in ("rec", "erank") and v.row in by_variant.index:
            r = by_variant.loc[v.row]
            found[v.key] = Found(float(r[v.quantity]), f"lr {r['lr']:g} (S4)",
                               **spread(sens, v.row, r["lr"], v.quantity))
    for convention in dict.fromkeys(envelope["convention"]):
        rows = envelope[envelope["convention"] == convention]
        text = ", ".join(f"p {r['p']:g}: {r['rec']:.4f}/{r['erank']:.1f}" for _, r in rows.iterrows())
        found[("Section 7 dial", convention, "monotone")] = Found(float(monotone(rows)), f"rec/erank {text}")
    if {"rms_p0", "geo_p0"} <= set(by_variant.index):
        rms, geo = by_variant.loc["rms_p0", "rec"], by_variant.loc["geo_p0", "rec"]
        found[("Section 7 dial", "geo vs rms at p = 0", "rec_diff")] = Found(abs(float(geo - rms)),
                                                                            f"GEO {geo:.4f}, RMS {rms:.4f}")
    if fixed is not None:
        for _, r in fixed.iterrows():
            outcome = {"monotone": 1.0, "not monotone": 0.0}.get(r["verdict"], math.nan)
            found[("Section 7 dial", f"fixed lr {r['lr']:g}", "monotone")] = Found(outcome, r["verdict"])
    keys = {v.key for v in published.DIAL}
    return {k: v for k, v in found.items() if k in keys}



# --- which cells the sensitivity reruns repeat -----------------------------------------------------

# Experiment -> (selection rule, methods) whose selected cells a published value rests on; methods
# None: every method. The zoo also reruns each runner-up and the published lr (Table 2's near-tie
# rule compares them); the lr-sensitivity control reruns each method's flow-limit cell; the decay
# control every rec-sel (S3a) cell of its three arms (Table 6's released log) and RMSProp's
# spd-sel (S3b) cells (App. D.7).
RERUN = {"second_size": [("S2", None)], "schedule_const": [("S3a", None), ("S3b", [cards.RMSPROP])],
         "schedule_rmsprop_const": [("S3b", [cards.RMSPROP])], "schedule_decay": [("S3a", None)],
         "schedule_decay_full": [("S3a", None)], "dial": [("S4", None)]}


def reruns(experiment: str) -> list[tuple[str, list[str] | None]]:
    if experiment.startswith("init_scale_"):
        return [("S2", None)]
    return RERUN.get(experiment, [])


# The cells the zoo and the lr-sensitivity control rerun beyond RERUN's (rerun_cells).
EXTRA_CELLS = {"zoo": "Table 2's selected lr, its runner-up and the published lr of each method",
               "lr_sensitivity": "each method's flow-limit cell"}


def rerun_rule(experiment: str) -> list[str]:
    """Which cells of an experiment are rerun, in words: part of its bundles' identity."""
    rules = [f"{rule} selected: {', '.join(methods) if methods else 'every method'}"
             for rule, methods in reruns(experiment)]
    return rules + ([EXTRA_CELLS[experiment]] if experiment in EXTRA_CELLS else [])


def has_reruns(experiment: str) -> bool:
    return bool(rerun_rule(experiment))


def rerun_grids(experiment: str, settings: dict) -> dict[str, list[float]]:
    """Method -> lr grid of an experiment (the dial's variants share its lrs)."""
    if experiment == "dial":
        return {name: list(settings["lrs"]) for name in dial_arms.labels(settings["ps"], settings["conventions"])}
    return settings["grids"]


def rerun_cells(experiment: str, settings: dict, runs: pd.DataFrame) -> list[tuple[str, float]]:
    """The (method, lr) cells of an experiment that its comparison rows rest on, in grid order
    per method and ascending lr."""
    cells = select.aggregate(runs)
    grids, tol = rerun_grids(experiment, settings), settings["tol"]
    chosen: dict[str, set[float]] = {m: set() for m in grids}
    if experiment == "zoo":
        scored = select.select(cells, grids, settings["selection"], tol)
        for method, grid in grids.items():
            hit = scored[scored["selected"] & (scored["method"] == method)]
            chosen[method] |= set(hit["lr"]) | {x for x in hit["runner_up_lr"] if math.isfinite(x)}
            if method in {v.row for v in published.TABLE2}:
                pub_lr = published.lookup("Table 2", method, "lr").value
                if pub_lr in grid:
                    chosen[method].add(pub_lr)
    elif experiment == "lr_sensitivity":
        by = cells.set_index(select.CELL)
        for method, grid in grids.items():
            flow = controls.flow_limit(by, method, grid, tol)
            if flow is not None:
                chosen[method].add(flow)
    for rule, methods in reruns(experiment):
        scored = select.select(cells, grids, rule, tol)
        for method in methods or list(grids):
            chosen[method] |= set(scored[scored["selected"] & (scored["method"] == method)]["lr"])
    return [(method, lr) for method in grids for lr in sorted(chosen[method])]
