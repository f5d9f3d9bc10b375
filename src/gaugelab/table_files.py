"""Each summary table from the files its workflow job reads, as (LaTeX, HTML): the one path from
inputs to table for the table jobs' scripts and ``gaugelab table`` alike, so a table rendered
outside Snakemake is the workflow's, byte for byte. Table 6 and Table 9 group their run records
by mode and by configuration; they render through ``snakemake table6`` / ``snakemake table9``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from . import control_tables, controls, records, tables


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
    _, _, tex, html = control_tables.init_scale(summaries, records.read_table(zoo), cfg["zoo"]["init"],
                                                cfg["zoo"]["tol"])
    return tex, html


def _nuclear_reference(paths: list[str], cfg: dict) -> tuple[str, str]:
    from . import nuclear  # torch: only this table reads solver records

    order = {seed: i for i, seed in enumerate(cfg["seeds"])}  # the rows in the config's seed order
    runs = sorted((nuclear.read(p) for p in paths), key=lambda r: (order.get(r["seed"], len(order)), r["seed"]))
    return control_tables.nuclear_reference(runs)[1:]


def _arm(name: str) -> Callable[[dict], dict]:
    return lambda cfg: controls.sensing_experiments(cfg)[name]


_SECOND, _LR = _arm("second_size"), _arm("lr_sensitivity")
_ONE, _TWO = (lambda n, cfg: n == 1), (lambda n, cfg: n == 2)

COMMANDS: dict[str, Command] = {
    "table2": Command("the zoo's summary.csv [and its comparison.csv, for the near-tie marks]",
                      lambda n, cfg: n in (1, 2), lambda p, cfg: table2(*p)),
    "second_size": Command("the second size's summary.csv", _ONE,
                           lambda p, cfg: control_tables.second_size(records.read_table(p[0]),
                                                                     _SECOND(cfg)["tol"])[1:]),
    "lr_sensitivity": Command("the lr-sensitivity arm's summary.csv", _ONE,
                              lambda p, cfg: control_tables.lr_sensitivity(
                                  records.read_table(p[0]), _LR(cfg)["grids"], _LR(cfg)["tol"])[1:]),
    "init_scale": Command("the zoo's summary.csv, then one arm's summary.csv per init of the config, in its order",
                          lambda n, cfg: n == 1 + len(cfg["init_scale"]["inits"]), _init_scale),
    "nuclear_reference": Command("the reference row's run records (JSON), one per seed", lambda n, cfg: n >= 1,
                                 _nuclear_reference),
    "dial": Command("the dial's envelope.csv and fixed_lr.csv", _TWO, lambda p, cfg: dial(*p)),
    "table3": Command("the twins' pairs.csv", _ONE, lambda p, cfg: table3(p[0], "drift")),
    "table3_qk": Command("the twins' pairs.csv", _ONE, lambda p, cfg: table3(p[0], "qk_mean")),
    "d5": Command("the D.5 summary (results/twins/d5.csv)", _ONE, lambda p, cfg: d5(p[0])),
}
