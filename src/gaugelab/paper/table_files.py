"""Each table from the files its workflow job reads, as (LaTeX, HTML): the one path from inputs to
table for the table jobs' scripts and ``gaugelab table`` alike, so a table rendered outside
Snakemake is the workflow's, byte for byte."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from . import table9, tables
from ..sensing import controls, select
from ..core import records
from ..optim import cards


def twin_summary(path):
    """A twin summary CSV: empty cells stay empty strings (a note), not NaN."""
    return records.read_table(path, keep_default_na=False, na_values=[""])


def table2(summary: str, comparison: str | None = None) -> tuple[str, str]:
    """Table 2 from the zoo's summary; the zoo comparison's near-tie selections are marked."""
    near_ties = set()
    if comparison is not None:
        rows = records.read_table(comparison, keep_default_na=False, na_values=[""])
        near_ties = set(rows[rows["note"].fillna("").str.startswith("near-tie")]["row"])
    frame = records.read_table(summary)
    return tables.table2_latex(frame, near_ties), tables.table2_html(frame, near_ties)


def table3(summary: str, metric: str = "drift") -> tuple[str, str]:
    """Table 3 (``metric`` drift) or its QK companion (qk_mean) from the twins' summary."""
    frame = twin_summary(summary)
    return tables.table3_latex(frame, metric), tables.table3_html(frame, metric)


def d5(summary: str) -> tuple[str, str]:
    frame = twin_summary(summary)
    frame["note"] = frame["note"].fillna("")
    return tables.d5_latex(frame), tables.d5_html(frame)


def dial(envelope: str, fixed_lr: str) -> tuple[str, str]:
    env, verdicts = records.read_table(envelope), records.read_table(fixed_lr)
    return tables.dial_latex(env, verdicts), tables.dial_html(env, verdicts)


# --- Section 5's control tables: their rows and columns, from their extractions -----------------

def second_size(summary: pd.DataFrame, tol: float) -> tuple[pd.DataFrame, str, str]:
    """Section 5's second size: the S2-selected row per method, and whether it interpolates."""
    chosen = summary[summary["selected"]].assign(interpolates=lambda f: f["train"] < tol)
    columns = [("method", "text", 0), ("lr", "lr", 0), ("rec", "num", 4), ("erank", "num", 2),
               ("train", "sci", 0), ("interpolates", "text", 0)]
    tex, html = tables.simple_table(chosen, columns, ["Method", "lr*", "rec", "erank", "mean train",
                                                      "interpolates"], "Section 5 second size")
    return chosen, tex, html


def phase(selected: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, str]]:
    """Section 8: the coarse grid per tau (each method's rec at lr*, the verdict, the train check)
    with tau*, and the schedule control per configuration with its two crossings; the files by
    the phase_tables rule's output names."""
    from ..sensing import phase as phase_diagram

    grid, schedule = phase_diagram.phase_rows(selected), phase_diagram.schedule_rows(selected)
    star = phase_diagram.tau_star(selected)
    methods = [m for m in phase_diagram.METHODS if f"{m} rec" in grid]
    columns = [("tau", "text", 0), ("tail energy %", "num", 1)]
    columns += [(f"{m} rec", "num", 4) for m in methods] + [("verdict", "text", 0), ("train check", "text", 0)]
    header = ["τ", "tail energy %", *[f"{cards.plain(m)} rec" for m in methods], "better", "train < 1e-4"]
    star_line = (f"τ* = {star:g} ({100 * star ** 2:.0f}% tail energy): the first τ where Muon's rec is no longer "
                 "below GD's" if star == star else "no crossing: Muon's rec stays below GD's at every τ")
    tex, html = tables.simple_table(grid.assign(tau=grid["tau"].map("{:g}".format)), columns, header,
                                    "Section 8 phase diagram, coarse grid", [star_line])
    crossings = phase_diagram.schedule_crossings(selected)
    notes = [f"τ* {label}: {value:g}" if value == value else f"{label}: no crossing"
             for label, value in crossings.items()]
    notes.append("a floor: no lr passes the gate (train < 1e-4), so the row is a floor, not a bias")
    shown = schedule.assign(tau=schedule["tau"].map("{:g}".format),
                            floor=schedule["floor"].map({True: "floor", False: ""}))
    s_columns = [("config", "text", 0), ("tau", "text", 0), ("lr", "lr", 0), ("rec", "num", 4),
                 ("rec_sd", "num", 4), ("train", "sci", 0), ("floor", "text", 0)]
    s_tex, s_html = tables.simple_table(shown, s_columns, ["config", "τ", "lr*", "rec", "sd", "mean train", ""],
                                        "Section 8 schedule control", notes)
    return grid, schedule, {"tex": tex, "html": html, "schedule_tex": s_tex, "schedule_html": s_html}


def phase_fine(selected: pd.DataFrame) -> tuple[pd.DataFrame, str, str]:
    """The phase diagram's GPU fine grid (sensing.md §13.3) per size and tau: each method's mean rec
    at lr* and its population sd, the better of Muon and GD, the train check; every crossing of
    each size below (there may be none)."""
    from ..sensing import phase_fine as fine

    grid = fine.rows(selected)
    methods = list(dict.fromkeys(selected["method"]))
    columns = [("size", "text", 0), ("tau", "text", 0), ("tail energy %", "num", 1)]
    columns += [c for m in methods for c in ((f"{m} rec", "num", 4), (f"{m} sd", "num", 4))]
    columns += [("verdict", "text", 0), ("train check", "text", 0)]
    header = ["size", "τ", "tail energy %", *[f"{cards.plain(m)} {q}" for m in methods for q in ("rec", "sd")],
              "better", "train < 1e-4"]
    notes = []
    for size in dict.fromkeys(grid["size"]):
        found = fine.crossings(selected, size)
        notes += [f"{size}: τ* ~ {t:g} (Muon cedes to GD; {100 * t ** 2:.0f}% tail energy)" for t in found] or [
            f"{size}: no crossing"]
    tex, html = tables.simple_table(grid.assign(tau=grid["tau"].map("{:g}".format)), columns, header,
                                    "App. D.9 phase diagram, GPU fine grid", notes)
    return grid, tex, html


def table11(table: pd.DataFrame, splits: pd.DataFrame) -> tuple[str, str]:
    """App. D.9's Table 11 (sensing.md §14.4): per arm and method lr* (EDGE: the grid's first or
    last value), rec at lr* as mean and population sd over every seed, erank, the cosine-all rec
    ("--": not run), the worst train, the seeds and their GPU statuses; each arm's split below."""
    shown = table.assign(edge=table["edge"].map({True: "EDGE", False: ""}), n=table["n"].map(str),
                         lr=table["lr"].map(lambda lr: f"{lr:g}" if lr == lr else "--"),  # NaN: every lr diverged
                         rank=table["rank"].map(str), mdof=table["mdof"].map("{:g}".format))
    columns = [("arm", "text", 0), ("n", "text", 0), ("rank", "text", 0), ("mdof", "text", 0),
               ("method", "text", 0), ("lr", "text", 0), ("edge", "text", 0), ("rec", "num", 4), ("rec_sd", "num", 4),
               ("erank", "num", 2), ("cosine_all_rec", "num", 4), ("worst_train", "sci", 0), ("seeds", "int", 0),
               ("statuses", "text", 0)]
    header = ["arm", "n", "r", "m/dof", "method", "lr*", "", "rec", "sd", "erank", "cosine-all rec", "worst train",
              "seeds", "status"]
    notes = [f"{r['arm']}: {r['split']}" + (f" (max eq rec {r['eq_max']:.4f}, min cw rec {r['cw_min']:.4f})"
                                            if r["split"] != "INCOMPLETE" else "") for _, r in splits.iterrows()]
    notes.append("CLEAN: every equivariant method's mean rec below every coordinate-wise one's; ScaledGD takes no "
                 "part; EDGE: lr* is its grid's smallest or largest value")
    return tables.simple_table(shown, columns, header, "App. D.9 Table 11, GPU problem-size ladder", notes)


def dial_gpu(table: pd.DataFrame) -> tuple[str, str]:
    """App. D.9's optional GPU dial arm (sensing.md §14.6) per size and p: lr* (EDGE: the grid's
    first or last value), rec at lr* as mean and population sd over the seeds, mean erank, int(mean
    steps), the gate, the seeds and their GPU statuses."""
    shown = table.assign(n=table["n"].map(str), p=table["p"].map("{:g}".format),
                         lr=table["lr"].map(lambda lr: f"{lr:g}" if lr == lr else "--"),  # NaN: every lr diverged
                         edge=table["edge"].map({True: "EDGE", False: ""}),
                         gated=table["gated"].map({True: "pass", False: "fail"}))
    columns = [("size", "text", 0), ("n", "text", 0), ("p", "text", 0), ("lr", "text", 0), ("edge", "text", 0),
               ("rec", "num", 4), ("rec_sd", "num", 4), ("erank", "num", 2), ("steps", "int", 0), ("gated", "text", 0),
               ("seeds", "int", 0), ("statuses", "text", 0)]
    header = ["size", "n", "p", "lr*", "", "rec", "sd", "erank", "steps", "train < 1e-4", "seeds", "status"]
    notes = ["Adam-p, RMS convention, GPU port (no outer eps); p = 1 is Adam; S5 over every seed of the size",
             "EDGE: lr* is its grid's smallest or largest value; the paper publishes no values for this arm"]
    return tables.simple_table(shown, columns, header, "App. D.9 optional GPU dial arm", notes)


def signum_audit(table: pd.DataFrame) -> tuple[str, str]:
    """App. D.10 P2 and P3: signum's mean rec and each seed's per horizon, anneal, tail and lr."""
    shown = table.assign(tau=table["tau"].map(lambda x: "" if x != x else f"{x:g}"),
                         steps=table["all steps"].map({True: "all", False: "stopped early"}))
    columns = [("part", "text", 0), ("T", "int", 0), ("anneal", "text", 0), ("tau", "text", 0), ("lr", "lr", 0),
               ("rec", "num", 4), ("seed recs", "text", 0), ("steps", "text", 0)]
    return tables.simple_table(shown, columns, ["part", "T", "anneal", "τ", "lr", "mean rec", "per seed", "steps"],
                               "App. D.10 signum audit, P2 and P3",
                               ["P2: horizon × schedule on Table 2's instances; P3: the phase diagram's tail targets",
                                "steps: whether every run executed all T steps (the audit has no early stop)"])


def signum_diagnostics(rows: pd.DataFrame) -> tuple[str, str]:
    """App. D.10 P1: the diagnostics' seed means at each logged step."""
    means = rows.drop(columns="seed").groupby("step", as_index=False).mean()
    names = [c for c in means.columns if c != "step"]
    columns = [("step", "int", 0)] + [(c, "num", 3) for c in names]
    return tables.simple_table(means, columns, ["step", *names], "App. D.10 signum audit, P1 diagnostics",
                               [f"means over {rows['seed'].nunique()} seeds; every seed's row in "
                                "results/signum_audit/diagnostics.csv"])


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


def table6(runs: dict[str, pd.DataFrame], grids: dict[str, dict], tol: float,
           rmsprop_budget: int) -> tuple[pd.DataFrame, pd.DataFrame, str, str]:
    """Table 6 from each mode's per-run frame: every cell scored by both rules, the midpoint counts."""
    table = controls.schedule(runs, grids, tol)
    counts = controls.midpoint_counts(table)
    return (table, counts, tables.table6_latex(table, counts, rmsprop_budget),
            tables.table6_html(table, counts, rmsprop_budget))


def schedule_runs(paths: list[str], cfg: dict) -> tuple[dict[str, pd.DataFrame], dict[str, dict]]:
    """The decay control's runs among the records at ``paths``: each mode's per-run frame and grids."""
    experiments = controls.sensing_experiments(cfg)
    arms = controls.schedule_arm_names(experiments)  # mode -> its arm
    runs = {mode: select.frame(controls.experiment_records(paths, experiments[arm], cfg["seeds"], cfg["dtype"]))
            for mode, arm in arms.items()}
    return runs, {mode: experiments[arm]["grids"] for mode, arm in arms.items()}


def _table6(paths: list[str], cfg: dict) -> tuple[str, str]:
    runs, grids = schedule_runs(paths, cfg)
    return table6(runs, grids, cfg["zoo"]["tol"], cfg["schedule_control"]["rmsprop_budget"])[2:]


def table9_tables(step1_paths: list[str], full_paths: list[str]) -> tuple[str, str]:
    """Table 9 from the step-1 bundles and whatever full-length records there are."""
    step1 = [r for path in step1_paths for r in records.read_twin_bundle(path)]
    full = [records.read_twin(path) for path in full_paths]
    table = table9.rows(step1, full)
    return table9.latex(table, step1), table9.html(table, step1)


def _table9(paths: list[str], cfg: dict) -> tuple[str, str]:
    bundles = [p for p in paths if records.is_valid(p, records.TWIN_BUNDLE_SCHEMA)]
    return table9_tables(bundles, [p for p in paths if p not in bundles])


@dataclass(frozen=True)
class Command:
    """One table of ``gaugelab table``: what its inputs are, and its rendering from their paths
    and the configuration (its tolerances and grids)."""

    inputs: str
    count: Callable[[int, dict], bool]   # (number of inputs, config) -> acceptable
    render: Callable[[list[str], dict], tuple[str, str]]


def _init_scale(paths: list[str], cfg: dict) -> tuple[str, str]:
    zoo, arms = paths[0], paths[1:]
    summaries = {scale: records.read_table(p) for scale, p in zip(cfg["init_scale"]["inits"], arms)}
    _, _, tex, html = init_scale(summaries, records.read_table(zoo), cfg["zoo"]["init"],
                                                cfg["zoo"]["tol"])
    return tex, html


def _nuclear_reference(paths: list[str], cfg: dict) -> tuple[str, str]:
    order = {seed: i for i, seed in enumerate(cfg["seeds"])}  # the rows in the config's seed order
    runs = sorted((records.load(p, records.CONVEX_SCHEMA) for p in paths),
                  key=lambda r: (order.get(r["seed"], len(order)), r["seed"]))
    return nuclear_reference(runs)[1:]


def _second_size(paths: list[str], cfg: dict) -> tuple[str, str]:
    tol = controls.sensing_experiments(cfg)["second_size"]["tol"]
    return second_size(records.read_table(paths[0]), tol)[1:]


def _lr_sensitivity(paths: list[str], cfg: dict) -> tuple[str, str]:
    arm = controls.sensing_experiments(cfg)["lr_sensitivity"]
    return lr_sensitivity(records.read_table(paths[0]), arm["grids"], arm["tol"])[1:]


def _exactly(n: int) -> Callable[[int, dict], bool]:
    return lambda given, cfg: given == n


def _some(given: int, cfg: dict) -> bool:
    return given >= 1


COMMANDS: dict[str, Command] = {
    "table2": Command("the zoo's summary.csv [and its comparison.csv, for the near-tie marks]",
                      lambda given, cfg: given in (1, 2), lambda p, cfg: table2(*p)),
    "table6": Command("the run records of the zoo and of every schedule arm (results/runs/{zoo,schedule_*}/)",
                      _some, _table6),
    "second_size": Command("the second size's summary.csv", _exactly(1), _second_size),
    "lr_sensitivity": Command("the lr-sensitivity arm's summary.csv", _exactly(1), _lr_sensitivity),
    "init_scale": Command("the zoo's summary.csv, then one arm's summary.csv per init of the config, in its order",
                          lambda given, cfg: given == 1 + len(cfg["init_scale"]["inits"]), _init_scale),
    "nuclear_reference": Command("the reference row's run records (JSON), one per seed", _some, _nuclear_reference),
    "dial": Command("the dial's envelope.csv and fixed_lr.csv", _exactly(2), lambda p, cfg: dial(*p)),
    "table3": Command("the twins' pairs.csv", _exactly(1), lambda p, cfg: table3(p[0], "drift")),
    "table3_qk": Command("the twins' pairs.csv", _exactly(1), lambda p, cfg: table3(p[0], "qk_mean")),
    "d5": Command("the D.5 summary (results/twins/d5.csv)", _exactly(1), lambda p, cfg: d5(p[0])),
    "table9": Command("the step-1 bundles (results/runs/table9_step1/) and any full-length records",
                      _some, _table9),
    "phase": Command("Section 8's selected rows (results/section8/selected.csv)", _exactly(1),
                     lambda p, cfg: tuple(phase(records.read_table(p[0]))[2][k] for k in ("tex", "html"))),
    "phase_fine": Command("the fine grid's selected rows (results/phase_fine/selected.csv)", _exactly(1),
                          lambda p, cfg: phase_fine(records.read_table(p[0]))[1:]),
    "table11": Command("the ladder's table11.csv and splits.csv (results/ladder/)", _exactly(2),
                       lambda p, cfg: table11(*map(records.read_table, p))),
    "dial_gpu": Command("the ladder's GPU dial arm's table.csv (results/dial_gpu/)", _exactly(1),
                        lambda p, cfg: dial_gpu(records.read_table(p[0]))),
}
