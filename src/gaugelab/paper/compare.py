"""Published versus reproduced: the verdict of each published value, one mapping for every family.

Each family (the zoo, the controls, the dial, the twins, Table 9) maps the published values it can
reproduce to what its records give (:class:`Found`); :func:`rows` turns that into comparison rows
with verdicts, and :func:`complete` gives every published value no family produced a row saying
it was not run here and which target makes it. Verdicts:

- ``exact``: a printed number, reproduced within its printed precision (published.unit);
- ``within bound``: a bound or order-of-magnitude claim that holds (never called exact);
- ``within measured sensitivity``: further off than the printed precision, but by no more than the
  tolerance plus how far the same cell moves when its initial factors are perturbed by ~1e-7
  (measured by this workflow's sensitivity reruns); for a chaotic cell, whose one rerun says
  little, the published value inside the range of its ensemble (the seed mean unperturbed and
  under each of K perturbations) widened by the tolerance, or within ENSEMBLE_SDS standard
  deviations of the ensemble's mean (:func:`ensemble_verdict`);
- ``differs``: anything else;
- ``not run here``: the records it needs are not part of this run (the note names the target).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import pandas as pd

from . import published

EXACT, BOUND, WITHIN, DIFFERS, NOT_RUN = ("exact", "within bound", "within measured sensitivity", "differs",
                                          "not run here")
VERDICTS = (EXACT, BOUND, WITHIN, DIFFERS, NOT_RUN)
COLUMNS = ["section", "source", "row", "quantity", "published", "published_value", "reproduced", "at",
           "abs_diff", "tolerance", "sensitivity", "verdict", "where", "why", "note"]


@dataclass(frozen=True)
class Found:
    """A published value's reproduced counterpart: its value, where it was read, the measured
    sensitivity of the cell it comes from (NaN: not measured), its ensemble where the cell is
    chaotic (sensing_quantities.sensitivity: seed means, the unperturbed one first) and a note.
    ``verdict`` is set only by a selection that decides it itself (Table 2's near-tie rule for a
    learning rate)."""
    value: float
    at: str
    sensitivity: float = math.nan
    note: str = ""
    verdict: str | None = None
    ensemble: tuple[float, ...] = ()


ENSEMBLE_SDS = 2.0  # how many of the ensemble's standard deviations a published value may lie off its mean


def verdict(published_value: float, reproduced: float, tolerance: float, sens: float,
            ensemble: tuple[float, ...] = ()) -> str:
    """A printed number: exact, within measured sensitivity, or differs; a chaotic cell's (one with
    an ensemble) is read against its ensemble, not its single rerun."""
    if not math.isfinite(reproduced):
        return DIFFERS
    diff = abs(reproduced - published_value)
    if diff <= tolerance * (1 + 1e-9) or (tolerance == 0 and math.isclose(reproduced, published_value, rel_tol=1e-12)):
        return EXACT
    if ensemble:
        return WITHIN if ensemble_position(published_value, tolerance, ensemble)[0] else DIFFERS
    if math.isfinite(sens) and diff <= tolerance + sens:
        return WITHIN
    return DIFFERS


def ensemble_position(published_value: float, tolerance: float, ensemble: tuple[float, ...]) -> tuple[bool, str]:
    """Whether a published value falls in a chaotic cell's ensemble, and where, in words: inside
    its range (widened by the tolerance), within ENSEMBLE_SDS standard deviations of its mean, or
    outside."""
    draws = [x for x in ensemble if math.isfinite(x)]
    if len(draws) < 2:
        return False, f"ensemble of {len(ensemble)}: too few finite seed means to judge"
    lo, hi, mean = min(draws), max(draws), sum(draws) / len(draws)
    sd = math.sqrt(sum((x - mean) ** 2 for x in draws) / (len(draws) - 1))
    z = abs(published_value - mean) / sd if sd > 0 else math.inf
    shape = (f"ensemble of {len(ensemble)} seed means (unperturbed and {len(ensemble) - 1} perturbations): "
             f"range {lo:.4g} to {hi:.4g}, mean {mean:.4g}, sd {sd:.2g}; the published value ")
    if lo - tolerance <= published_value <= hi + tolerance:
        return True, shape + "is inside its range"
    if z <= ENSEMBLE_SDS:
        return True, shape + f"is {z:.1f} sd from its mean"
    return False, shape + f"is outside it, {z:.1f} sd from its mean"


def bound_holds(v: published.Value, reproduced: float) -> bool:
    if v.kind == "decades":
        return math.isfinite(reproduced) and reproduced > 0 and abs(math.log10(reproduced / v.value)) <= v.tolerance
    if v.kind == "at_least":
        return reproduced >= v.tolerance  # +inf passes: an equivariant drift of exactly 0
    if v.kind == "at_most":
        return math.isfinite(reproduced) and reproduced <= v.tolerance
    if v.kind == "between":
        return math.isfinite(reproduced) and v.tolerance <= reproduced <= v.upper
    raise ValueError(f"{v.key}: kind {v.kind!r} is not a bound")


def judge(v: published.Value, reproduced: float, sens: float = math.nan, ensemble: tuple[float, ...] = ()) -> str:
    """The verdict of one value, read by its kind (published.Value.kind): a bound is never exact."""
    if v.is_bound:
        return BOUND if bound_holds(v, reproduced) else DIFFERS
    return verdict(v.value, reproduced, v.tolerance, sens, ensemble)


def near_tie(values: list[published.Value], chosen: list[Found], runner_up: list[Found], margin: float,
             decided_by: float) -> list[Found]:
    """One selected cell's readings of ``values``, or its runner-up's where the selection is a near
    tie (its margin below ``decided_by``, the measured sensitivity that decides it), the selection
    differs from a published value and the runner-up agrees with every one: then each reads "within
    measured sensitivity", never exact, its note giving both cells. For tables whose lrs the paper
    does not print (Table 6); Table 2's rule reads a near tie at the published lr."""
    if not margin < decided_by or all(judge(v, f.value, f.sensitivity, f.ensemble) != DIFFERS
                                      for v, f in zip(values, chosen)):
        return chosen
    if any(judge(v, f.value) != EXACT for v, f in zip(values, runner_up)):
        return chosen
    return [replace(f, verdict=WITHIN, note=f"near-tie: {c.at} beats {f.at} by {margin:.2e} < sensitivity "
                    f"{decided_by:.2e}; read at the runner-up ({c.at} gives {c.value:.4g})")
            for c, f in zip(chosen, runner_up)]


REQUIREMENT = {"decades": "within {t:g} decade(s)", "at_least": ">= {t:g}", "at_most": "<= {t:g}",
               "between": "in [{t:g}, {u:g}]"}


def requirement(v: published.Value) -> str:
    """The check a value is held to, in a few characters."""
    if v.is_bound:
        return REQUIREMENT[v.kind].format(t=v.tolerance, u=v.upper)
    return "equal" if v.tolerance == 0 else f"± {v.tolerance:g}"


# What makes a value of each non-default target (published.Value.target), for its `not run here` note.
TARGETS = {"gpu": "`snakemake gpu` (the full-length float64 runs, the phase diagram's fine grid)",
           "section8": "`snakemake section8` (Section 8's phase diagram, opt-in)",
           "signum_audit": "`snakemake signum_audit` (App. D.10's signum audit, opt-in)",
           "ladder": "`snakemake ladder` (App. D.9's GPU problem-size ladder, opt-in; float64, meant for a GPU)"}


def row(v: published.Value, found: Found | None) -> dict:
    """One comparison row; ``found`` None: not run here."""
    base = {"section": published.section(v.source), "source": v.source, "row": v.row, "quantity": v.quantity,
            "published": v.printed, "published_value": v.value, "tolerance": requirement(v),
            "where": v.where, "why": v.why}
    if found is None:
        target = TARGETS.get(v.target, "a configuration that runs it")
        return {**base, "reproduced": math.nan, "at": "", "abs_diff": math.nan, "sensitivity": math.nan,
                "verdict": NOT_RUN, "note": f"needs {target}"}
    diff = abs(found.value - v.value) if math.isfinite(found.value) else math.nan
    note = found.note
    if found.ensemble and not v.is_bound:
        note = "; ".join(n for n in (note, ensemble_position(v.value, v.tolerance, found.ensemble)[1]) if n)
    return {**base, "reproduced": found.value, "at": found.at, "abs_diff": diff, "sensitivity": found.sensitivity,
            "verdict": found.verdict or judge(v, found.value, found.sensitivity, found.ensemble), "note": note}


def rows(values: list[published.Value], found: dict[tuple, Found]) -> pd.DataFrame:
    """The rows of every value in ``values`` that ``found`` has, in the published order. A key in
    ``found`` with no published value is an error: every row has a published source."""
    keys = {v.key for v in values}
    stray = [k for k in found if k not in keys]
    if stray:
        raise KeyError(f"reproduced quantities with no published value: {stray}")
    return pd.DataFrame([row(v, found[v.key]) for v in values if v.key in found], columns=COLUMNS)


def complete(parts: pd.DataFrame) -> pd.DataFrame:
    """The merged comparison in the published order: one row per published value, ``not run here``
    for those no part produced. A duplicate or a row with no published value is an error."""
    keys = list(zip(parts["source"], parts["row"], parts["quantity"]))
    published_keys = {v.key for v in published.every()}
    if len(set(keys)) != len(keys):
        raise ValueError(f"comparison rows repeated: {sorted(k for k in set(keys) if keys.count(k) > 1)}")
    stray = [k for k in keys if k not in published_keys]
    if stray:
        raise ValueError(f"comparison rows with no published value: {stray}")
    by_key = dict(zip(keys, parts.to_dict("records")))
    return pd.DataFrame([by_key.get(v.key) or row(v, None) for v in published.every()], columns=COLUMNS)


def counts(comparison: pd.DataFrame) -> pd.DataFrame:
    """Rows per paper section and verdict, with totals (the report's landing page)."""
    table = pd.crosstab(comparison["section"], comparison["verdict"]).reindex(columns=list(VERDICTS), fill_value=0)
    table.loc["all"] = table.sum()
    table["rows"] = table.sum(axis=1)
    return table
