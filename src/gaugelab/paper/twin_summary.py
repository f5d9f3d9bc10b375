"""Extraction for the attention twins (spec: attention.md §9.4–9.6, §11): records to one summary
row per pair, and the derived quantities of Table 3, Figure 2 and Appendix D.5.

Everything here works on run records (or the summary frame built from them); nothing is typed in.
"""

from __future__ import annotations

import math

import pandas as pd

from . import published
from ..core import records
from ..optim import cards
from .compare import Found
from ..attention.pairs import TWINS, Pair

KEY = ["optimizer", "twin", "init_seed", "twin_seed", "sigma"]
FLOOR = 1e-12  # dec(s) guard (§9.4)


def pair_of(row) -> Pair:
    return Pair(row["optimizer"], row["twin"], int(row["init_seed"]), int(row["twin_seed"]), float(row["sigma"]))


def key(pair: Pair) -> tuple:
    return (pair.optimizer, pair.twin, pair.init_seed, pair.twin_seed, pair.sigma)


def sets_of(settings: dict) -> dict[str, list[Pair]]:
    """The config's run sets as pairs (§10), in their listed order."""
    return {name: Pair.listed(entries) for name, entries in settings["sets"].items()}


def unique_pairs(sets: dict[str, list[Pair]]) -> list[Pair]:
    """Every pair once, in first-listed order: a pair shared by sets is computed once (§10)."""
    return list(dict.fromkeys(p for pairs in sets.values() for p in pairs))


def frame(recs: list[dict], sets: dict[str, list[Pair]]) -> pd.DataFrame:
    """One row per record: the key, the sets it belongs to, status, finals, and drift, QK mean and
    QK max at every checkpoint (columns ``drift_<s>``, ``qk_mean_<s>``, ``qk_max_<s>``).
    Records made under different numerics modes are refused (records.one_numerics)."""
    records.one_numerics(recs, "twin records of one summary")
    rows = []
    for r in recs:
        pair = Pair(r["optimizer"], r["twin"], r["init_seed"], r["twin_seed"], float(r["sigma"]))
        row = {**dict(zip(KEY, key(pair))), "variant": pair.variant,
               "sets": " ".join(name for name, pairs in sets.items() if pair in pairs),
               "lr": r["lr"], "status": r["status"], "steps": r["steps"], "steps_done": r["steps_done"],
               "identity_exact": r["identity_exact"],
               **{k: r[k] for k in ("acc1", "acc2", "val_loss1", "val_loss2", "train_loss1", "train_loss2")},
               "per_head_max": max(r["per_head_final"]), "final_drift": r["curve"][-1][1],
               "final_qk_mean": r["curve"][-1][2]}
        for step, d, qk_mean, qk_max in r["curve"]:
            row.update({f"drift_{step}": d, f"qk_mean_{step}": qk_mean, f"qk_max_{step}": qk_max})
        rows.append(row)
    out = pd.DataFrame(rows)
    order = {"optimizer": list(cards.twin_optimizers()), "twin": list(TWINS)}
    out["_o"] = out["optimizer"].map(order["optimizer"].index)
    out["_t"] = out["twin"].map(order["twin"].index)
    return (out.sort_values(["_o", "_t", "sigma", "init_seed", "twin_seed"]).drop(columns=["_o", "_t"])
            .reset_index(drop=True))


def steps_of(summary: pd.DataFrame) -> list[int]:
    """The checkpoint steps present in the summary, ascending."""
    return sorted(int(c.split("_")[1]) for c in summary.columns if c.startswith("drift_"))


def row(summary: pd.DataFrame, pair: Pair) -> pd.Series:
    """The summary row of ``pair``; a missing record is an error naming the pair (§15.22)."""
    hit = summary
    for col, value in zip(KEY, key(pair)):
        hit = hit[hit[col] == value]
    if len(hit) != 1:
        raise KeyError(f"no record for the {pair}")
    return hit.iloc[0]


def in_set(summary: pd.DataFrame, name: str) -> pd.DataFrame:
    return summary[summary["sets"].str.split().apply(lambda names: name in names)]


def drift_at(r: pd.Series, step: int) -> float:
    value = r.get(f"drift_{step}", math.nan)
    return float(value) if value is not None else math.nan


def decades(gauge: pd.Series, noise: pd.Series, step: int) -> float:
    """dec(s) = |log10((drift_g(s) + 1e-12) / (drift_n(s) + 1e-12))| (§9.4)."""
    return abs(math.log10((drift_at(gauge, step) + FLOOR) / (drift_at(noise, step) + FLOOR)))


def mean_decades(gauge: pd.Series, noise: pd.Series, steps: list[int], after: int, inclusive: bool) -> float:
    """Mean dec(s) over checkpoints s > after (Section 6) or s >= after (D.5 chaos check)."""
    chosen = [s for s in steps if (s >= after if inclusive else s > after)]
    values = [decades(gauge, noise, s) for s in chosen if math.isfinite(drift_at(gauge, s) + drift_at(noise, s))]
    return sum(values) / len(values) if values else math.nan


def muon_chaos(summary: pd.DataFrame, init_seed: int) -> dict:
    """Muon's gauge twin against its noise twin (same init): dec(100), the Section 6 mean over
    s > 100 and the D.5 mean over s >= 100."""
    muon = summary[(summary["optimizer"] == cards.MUON) & (summary["init_seed"] == init_seed)]
    gauges, noises = muon[muon["twin"] == "gauge"], muon[muon["twin"] == "noise"]
    if gauges.empty or noises.empty:
        return {"dec100": math.nan, "mean_after100": math.nan, "mean_from100": math.nan}
    g = gauges.sort_values("twin_seed").iloc[0]
    n = noises.sort_values("sigma").iloc[0]
    steps = steps_of(summary)
    return {"dec100": decades(g, n, 100) if 100 in steps else math.nan,
            "mean_after100": mean_decades(g, n, steps, 100, inclusive=False),
            "mean_from100": mean_decades(g, n, steps, 100, inclusive=True)}


def ratio_d5(d5: pd.DataFrame) -> float:
    """min over the Adam gauge pairs of drift(final) ÷ max over the init-42 Adam noise twins of
    drift(final) (§9.5)."""
    adam = d5[d5["optimizer"] == cards.ADAM]
    gauge, noise = adam[adam["twin"] == "gauge"], adam[(adam["twin"] == "noise") & (adam["init_seed"] == 42)]
    if gauge.empty or noise.empty:
        return math.nan
    return float(gauge["final_drift"].min() / noise["final_drift"].max())


def d5_summary(summary: pd.DataFrame, tau: float = 1.0) -> pd.DataFrame:
    """Appendix D.5 (§11.2): one row per quantity, over the D5 set's records."""
    d5 = in_set(summary, "d5")
    adam = d5[d5["optimizer"] == cards.ADAM]
    gauge = adam[adam["twin"] == "gauge"]
    eq = d5[d5["optimizer"].isin([cards.SGD, cards.SCALAR_ADAM]) & (d5["twin"] == "gauge")]
    rows = [
        ("adam_gauge_step1_min", gauge["drift_1"].min(), f"{len(gauge)} Adam gauge pairs"),
        ("adam_gauge_step1_max", gauge["drift_1"].max(), f"{len(gauge)} Adam gauge pairs"),
        ("adam_gauge_final_min", gauge["final_drift"].min(), ""),
        ("adam_gauge_final_max", gauge["final_drift"].max(), ""),
    ]
    for _, n in adam[adam["twin"] == "noise"].sort_values(["init_seed", "sigma"]).iterrows():
        rows.append((f"adam_noise_final_sigma{n['sigma']:g}", n["final_drift"], f"init {n['init_seed']}"))
    rows.append(("ratio_d5", ratio_d5(d5), "min Adam gauge final / max init-42 Adam noise final"))
    rows.append(("equivariant_gauge_final_max", eq["final_drift"].max(), f"{len(eq)} SGD and scalar-Adam gauge pairs"))
    for init in sorted(d5[d5["optimizer"] == cards.MUON]["init_seed"].unique()):
        chaos = muon_chaos(d5, int(init))["mean_from100"]
        verdict = ("chaos confirmed (gauge and noise twins track)" if chaos < tau
                   else "not confirmed" if math.isfinite(chaos) else "no checkpoint at or after step 100")
        rows.append((f"muon_chaos_mean_init{init}", chaos, verdict))
    return pd.DataFrame(rows, columns=["quantity", "value", "note"])


def separation(summary: pd.DataFrame, init_seed: int = 42) -> float:
    """C8: the smallest gap, in decades, between Adam's gauge drift and the SGD / scalar-Adam
    gauge drifts over every checkpoint s >= 1 (inf where an equivariant drift is exactly 0)."""
    s6 = summary[summary["init_seed"] == init_seed]
    gauges = s6[s6["twin"] == "gauge"]
    adam = gauges[gauges["optimizer"] == cards.ADAM].sort_values("twin_seed")
    eq = gauges[gauges["optimizer"].isin([cards.SGD, cards.SCALAR_ADAM])]
    if adam.empty or eq.empty:
        return math.nan
    a = adam.iloc[0]
    gaps = [math.log10(drift_at(a, s) / drift_at(e, s)) if drift_at(e, s) > 0 else math.inf
            for _, e in eq.iterrows() for s in steps_of(summary) if s >= 1]
    return min(gaps) if gaps else math.nan


def figure2_curves(summary: pd.DataFrame) -> dict[tuple[str, str], list[tuple[int, float]]]:
    """Figure 2's data: per (optimizer, twin), the S6 record's [(step, drift)] — gauge twins from
    S6-main, noise twins from S6-noise (the smallest σ). The identity twin is not plotted."""
    steps = steps_of(summary)
    out = {}
    for name, twin in (("s6_main", "gauge"), ("s6_noise", "noise")):
        rows = in_set(summary, name)
        rows = rows[rows["twin"] == twin].sort_values(["sigma", "init_seed", "twin_seed"])
        for _, r in rows.drop_duplicates("optimizer").iterrows():
            out[(r["optimizer"], twin)] = [(s, drift_at(r, s)) for s in steps]
    return out


def figure2_spread(summary: pd.DataFrame) -> dict[tuple[str, str], list[list[tuple[int, float]]]]:
    """The seed spread behind Figure 2's single gauge pairs: per (optimizer, "gauge"), every D.5
    pair's [(step, drift)] (its init and gauge seeds; Figure 2's own pair among them)."""
    steps, rows = steps_of(summary), in_set(summary, "d5")
    out: dict[tuple[str, str], list[list[tuple[int, float]]]] = {}
    for _, r in rows[rows["twin"] == "gauge"].sort_values(["optimizer", "init_seed", "twin_seed"]).iterrows():
        out.setdefault((r["optimizer"], "gauge"), []).append([(s, drift_at(r, s)) for s in steps])
    return out


def published_quantities(summary: pd.DataFrame, sets: dict[str, list[Pair]]) -> dict[tuple, Found]:
    """The reproduced counterpart of every published Section 6 / D.5 value that the configured
    sets allow (spec: attention.md §12.1-12.2, §12.3b, §12.4)."""

    def first(name, optimizer, twin, sigma=None):
        for p in sets.get(name, []):
            if p.optimizer == optimizer and p.twin == twin and (sigma is None or p.sigma == sigma):
                return row(summary, p)
        return None

    gauge, identity = first("s6_main", cards.ADAM, "gauge"), first("s6_main", cards.ADAM, "identity")
    noise = first("s6_noise", cards.ADAM, "noise", 1e-7)
    where = lambda r: f"{r['variant']} twin ({r['init_seed']}, {r['twin_seed']})"
    steps = steps_of(summary)
    out = {}
    if gauge is not None:
        last = int(gauge["steps_done"])
        out[("Table 3", "Adam gauge", "drift_0")] = Found(drift_at(gauge, 0), where(gauge))
        out[("Table 3", "Adam gauge", "drift_1")] = Found(drift_at(gauge, 1), where(gauge))
        out[("Table 3", "Adam gauge", "drift_final")] = Found(float(gauge["final_drift"]), f"step {last}")
        out[("Section 6", "Adam gauge", "qk_final")] = Found(float(gauge["final_qk_mean"]), f"QK mean, step {last}")
        s6 = in_set(summary, "s6_main")
        out[("Section 6", "SGD and scalar-Adam gauge", "decades")] = Found(separation(s6), "min over steps >= 1")
        s6_all = summary[summary["sets"].str.contains("s6_")]
        chaos = muon_chaos(s6_all, int(gauge["init_seed"]))
        out[("Table 3", "Muon gauge vs noise", "dec_100")] = Found(chaos["dec100"], "step 100")
        out[("Section 6", "Muon gauge vs noise", "dec_after100")] = Found(chaos["mean_after100"], "mean over s > 100")
        centre = published.lookup("Section 6", "every optimizer", "val_acc").value
        accs = [float(r[a]) for _, r in s6.iterrows() for a in ("acc1", "acc2")]
        names = sorted(dict.fromkeys(s6["optimizer"]), key=list(cards.twin_optimizers()).index)
        out[("Section 6", "every optimizer", "val_acc")] = Found(
            max(accs, key=lambda a: abs(a - centre)),  # the farthest from the published value
            f"min {min(accs):.3f}, max {max(accs):.3f} over {len(s6)} S6-main pairs ({', '.join(names)})")
        out.update(_trajectory(summary, sets, first))
    muon_g, muon_n = first("s6_main", cards.MUON, "gauge"), first("s6_noise", cards.MUON, "noise", 1e-7)
    if muon_g is not None and muon_n is not None and any(s <= 50 for s in steps):
        early = [s for s in steps if s <= 50]
        worst = max(max(drift_at(muon_g, s), drift_at(muon_n, s)) for s in early)
        after = [s for s in steps if s > 50]
        rise = f"; at step {after[0]}: gauge {drift_at(muon_g, after[0]):.1e}" if after else ""
        out[("Section 6", "Muon gauge and noise", "floor_50")] = Found(worst, f"max over steps {early}{rise}")
    if noise is not None:
        out[("Table 3", "Adam noise 1e-7", "drift_0")] = Found(drift_at(noise, 0), where(noise))
        out[("Table 3", "Adam noise 1e-7", "drift_1")] = Found(drift_at(noise, 1), where(noise))
    if gauge is not None and noise is not None:
        out[("Figure 2", "Adam gauge vs noise", "ratio_1")] = Found(drift_at(gauge, 1) / drift_at(noise, 1),
                                                                    "drift(1) of the gauge twin / the noise twin")
    if identity is not None:
        cols = [c for c in summary.columns if c.startswith(("drift_", "qk_mean_", "qk_max_"))]
        out[("Table 3", "Adam identity", "max_drift")] = Found(float(identity[cols].max()),
                                                              f"drift and QK, {len(steps)} checkpoints")
    d5 = in_set(summary, "d5")
    if len(d5):
        q = d5_summary(summary).set_index("quantity")["value"]
        n = int(((d5["optimizer"] == cards.ADAM) & (d5["twin"] == "gauge")).sum())
        out[("Appendix D.5", "Adam gauge", "step1_min")] = Found(float(q["adam_gauge_step1_min"]),
                                                                 f"{n} Adam gauge pairs")
        out[("Appendix D.5", "Adam gauge", "step1_max")] = Found(float(q["adam_gauge_step1_max"]),
                                                                 f"{n} Adam gauge pairs")
        out[("Appendix D.5", "Adam gauge vs noise", "ratio")] = Found(float(q["ratio_d5"]), "final step")
        chaos = [v for k, v in q.items() if k.startswith("muon_chaos_mean_init")]
        if chaos:
            out[("Appendix D.5", "Muon gauge vs noise", "dec_from100")] = Found(
                max(chaos), f"max over {len(chaos)} Muon init seeds, mean over s >= 100")
        out.update(_d5_logged(d5, q))
    return out


def _d5_logged(d5: pd.DataFrame, q: pd.Series) -> dict[tuple, Found]:
    """The values of App. D.5's released log (published.D5_LOGGED, attention.md §12.5) from the D5
    set's records and its summary ``q`` (d5_summary's values by quantity)."""
    out = {}
    adam = d5[d5["optimizer"] == cards.ADAM]
    gauge = adam[adam["twin"] == "gauge"]
    if len(gauge):
        for end, pick in (("final_min", "adam_gauge_final_min"), ("final_max", "adam_gauge_final_max")):
            out[("Appendix D.5", "Adam gauge", end)] = Found(float(q[pick]), f"{len(gauge)} Adam gauge pairs, "
                                                                             "final step")
        out[("Appendix D.5", "Adam gauge", "acc_gap")] = Found(
            float((gauge["acc1"] - gauge["acc2"]).abs().max()), f"max over {len(gauge)} Adam gauge pairs")
    logged = {v.key for v in published.D5_LOGGED}
    for _, n in adam[(adam["twin"] == "noise") & (adam["init_seed"] == 42)].iterrows():
        for quantity, column, at in (("drift_final", "final_drift", "final step"), ("drift_1", "drift_1", "step 1")):
            key = ("Appendix D.5", f"Adam noise {n['sigma']:g}", quantity)
            if key in logged:
                out[key] = Found(float(n[column]), f"{at}, init 42")
    if "equivariant_gauge_final_max" in q.index and math.isfinite(q["equivariant_gauge_final_max"]):
        out[("Appendix D.5", "SGD and scalar-Adam gauge", "final_max")] = Found(
            float(q["equivariant_gauge_final_max"]), "max over the SGD and scalar-Adam gauge pairs, final step")
    for init in (42, 123):
        if math.isfinite(q.get(f"muon_chaos_mean_init{init}", math.nan)):  # NaN: no checkpoint at s >= 100
            out[("Appendix D.5", f"Muon gauge vs noise, init {init}", "dec_from100")] = Found(
                float(q[f"muon_chaos_mean_init{init}"]), "mean over s >= 100")
    if len(d5) and "acc1" in d5:
        worst = (d5["acc1"] - d5["acc2"]).abs()
        out[("Appendix D.5", "every twin", "acc_gap")] = Found(
            float(worst.max()), f"max over {len(d5)} D5 pairs ({d5.loc[worst.idxmax(), 'variant']} twin of "
                                f"{d5.loc[worst.idxmax(), 'optimizer']})")
    return out


_TRAJECTORY_RUNS = {"Adam gauge": (cards.ADAM, "drift"), "Adam gauge QK": (cards.ADAM, "qk_mean"),
                    "SGD gauge": (cards.SGD, "drift"), "scalar-Adam gauge": (cards.SCALAR_ADAM, "drift"),
                    "Muon gauge": (cards.MUON, "drift")}


def _trajectory(summary: pd.DataFrame, sets: dict, first) -> dict[tuple, Found]:
    """The S6-main gauge pairs at the released log's checkpoints (attention.md §12.3b)."""
    out = {}
    for v in published.TRAJECTORY:
        optimizer, column = _TRAJECTORY_RUNS[v.row]
        r = first("s6_main", optimizer, "gauge")
        step = int(v.quantity.split("_")[1])
        if r is not None and f"{column}_{step}" in r.index:
            out[v.key] = Found(float(r[f"{column}_{step}"]), f"step {step}, {r['variant']} twin ({r['init_seed']}, "
                                                              f"{r['twin_seed']})")
    return out
