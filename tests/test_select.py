import math
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

from gaugelab.sensing import select


def cells(rows):
    return pd.DataFrame([{"method": m, "lr": lr, "rec": rec, "train": tr, "worst_train": wt,
                          "rec_sd": 0.0, "erank": 1.0, "nuc": 1.0, "bal": 0.0, "steps": 10, "max_steps": 10, "seeds": 3,
                          "interpolated": 3, "diverged": 0} for m, lr, rec, tr, wt in rows])


def test_s1_gates_on_the_worst_seed_and_ties_go_to_the_smaller_lr():
    c = cells([("gd", 0.01, 0.2, 1e-8, 2e-8), ("gd", 0.03, 0.2, 1e-8, 2e-8), ("gd", 0.1, 0.05, 1e-8, 5e-7)])
    out = select.select(c, {"gd": [0.01, 0.03, 0.1]}, "S1", 1e-7).set_index("lr")
    assert out.loc[0.01, "selected"] and not out.loc[0.03, "selected"]
    assert not out.loc[0.1, "gated"] and out.loc[0.1, "score"] > 10  # penalised, not gated
    assert out.loc[0.01, "runner_up_lr"] == 0.03 and out.loc[0.01, "margin"] == 0.0
    # S2 gates on the mean: the 0.1 cell now passes and wins
    s2 = select.select(c, {"gd": [0.01, 0.03, 0.1]}, "S2", 1e-7).set_index("lr")
    assert s2.loc[0.1, "selected"]


def test_nan_cells_are_skipped_and_all_nan_selects_nothing():
    c = cells([("gd", 0.01, math.nan, math.nan, math.nan), ("gd", 0.03, 0.3, 1e-8, 1e-8)])
    out = select.select(c, {"gd": [0.01, 0.03]}, "S1", 1e-7).set_index("lr")
    assert out.loc[0.03, "selected"] and not out.loc[0.01, "selected"]
    none = select.select(cells([("gd", 0.01, math.nan, math.nan, math.nan)]), {"gd": [0.01]}, "S1", 1e-7)
    assert not none["selected"].any()


def test_aggregate_keeps_nan_seeds():
    runs = pd.DataFrame([{"method": "gd", "lr": 0.1, "seed": s, "status": st, "steps": 5, "train": tr,
                          "rec": rec, "erank": 1.0, "nuc": 1.0, "bal": 0.0}
                         for s, st, tr, rec in [(1, "interpolated", 1e-8, 0.1), (2, "diverged", math.nan, math.nan)]])
    agg = select.aggregate(runs).iloc[0]
    assert math.isnan(agg["rec"]) and agg["diverged"] == 1


def test_clean_split_and_rank_split():
    chosen = pd.DataFrame({"method": ["gd", "muon", "adam", "signum"], "rec": [0.13, 0.0, 0.57, 0.45],
                           "erank": [4.5, 2.95, 14.4, 7.8]})
    split = select.clean_split(chosen)
    assert split["verdict"] == "CLEAN" and abs(split["gap"] - 0.32) < 1e-12 and split["correct"] == 4
    rank = select.rank_split(chosen)
    assert rank["correct"] == 3  # signum has low rank but a wrong answer
    overlap = chosen.assign(rec=[0.5, 0.0, 0.57, 0.45])
    assert select.clean_split(overlap)["verdict"] == "OVERLAP"


def test_s4_drops_any_diverged_cell_and_has_no_train_term():
    c = cells([("p1", 0.01, 0.5, 1e-8, 1e-8), ("p1", 0.1, 0.1, 1e-8, 1e-8), ("p1", 0.3, 0.2, 1e-3, 1e-3)])
    c.loc[c["lr"] == 0.1, "diverged"] = 1  # one seed diverged: dropped although its mean looks best
    out = select.select(c, {"p1": [0.01, 0.1, 0.3]}, "S4", 1e-7).set_index("lr")
    assert out.loc[0.01, "selected"] and math.isnan(out.loc[0.1, "score"])
    assert out.loc[0.3, "score"] == 0.2 + 10  # not gated: +10, no train term


def test_s3a_rec_sel_gates_on_the_mean_and_falls_back_to_the_floor_without_penalty():
    c = cells([("gd", 0.01, 0.3, 5e-8, 2e-7), ("gd", 0.03, 0.1, 1e-6, 1e-6), ("gd", 0.1, 0.2, 1e-8, 1e-8)])
    out = select.select(c, {"gd": [0.01, 0.03, 0.1]}, "S3a", 1e-7).set_index("lr")
    assert out.loc[0.1, "selected"]  # the lower-rec 0.03 cell does not interpolate: out of the pool
    floor = cells([("rmsprop", 1e-4, 0.6, 1e-5, 1e-5), ("rmsprop", 1e-3, 0.5, 1e-3, 1e-3)])
    out = select.select(floor, {"rmsprop": [1e-4, 1e-3]}, "S3a", 1e-7).set_index("lr")
    assert out.loc[1e-3, "selected"] and out.loc[1e-3, "score"] == 0.5  # no penalty term


def test_s3b_spd_sel_takes_the_fewest_steps_else_the_lowest_train():
    c = cells([("gd", 0.01, 0.3, 5e-8, 5e-8), ("gd", 0.03, 0.1, 5e-8, 5e-8), ("gd", 0.1, 0.2, 1e-6, 1e-6)])
    c["steps"] = [4000, 1200, 200]
    out = select.select(c, {"gd": [0.01, 0.03, 0.1]}, "S3b", 1e-7).set_index("lr")
    assert out.loc[0.03, "selected"]  # 0.1 is faster but does not interpolate
    slow = cells([("rmsprop", 1e-4, 0.6, 1e-5, 1e-5), ("rmsprop", 1e-3, 0.5, 1e-3, 1e-3)])
    out = select.select(slow, {"rmsprop": [1e-4, 1e-3]}, "S3b", 1e-7).set_index("lr")
    assert out.loc[1e-4, "selected"]  # lowest train


def test_s6_selects_nothing():
    c = cells([("gd", 0.01, 0.3, 5e-8, 5e-8), ("gd", 0.03, 0.1, 5e-8, 5e-8)])
    assert not select.select(c, {"gd": [0.01, 0.03]}, "S6", 1e-7)["selected"].any()


def test_midpoint_split_counts_against_the_gd_adam_midpoint():
    chosen = pd.DataFrame({"method": ["gd", "muon", "adam", "signum", "shampoo"],
                           "rec": [0.13, 0.0, 0.57, 0.45, 0.36]})
    mid = select.midpoint_split(chosen)
    assert abs(mid["threshold"] - 0.35) < 1e-12 and mid["total"] == 5
    assert mid["correct"] == 4  # shampoo (eq) lands above the midpoint
    assert math.isnan(select.midpoint_split(chosen[chosen["method"] != "adam"])["threshold"])


def test_a_control_is_on_neither_side_of_any_split():
    """ScaledGD (class ctrl, the GPU ladder's control) takes no part in a count: each count is the
    one its rows give without it, whatever its values."""
    chosen = pd.DataFrame({"method": ["gd", "muon", "adam", "signum", "shampoo"],
                           "rec": [0.13, 0.0, 0.57, 0.45, 0.36], "erank": [4.5, 2.95, 14.4, 7.8, 3.0]})
    for rec, erank in ((0.0, 1.0), (0.99, 20.0)):
        with_control = pd.concat([chosen, pd.DataFrame({"method": ["scaledgd"], "rec": [rec], "erank": [erank]})])
        for count in (select.clean_split, select.rank_split, select.midpoint_split):
            mine, alone = count(with_control), count(chosen)
            assert mine.keys() == alone.keys()
            assert all(mine[k] == alone[k] or (math.isnan(mine[k]) and math.isnan(alone[k])) for k in mine), count
    assert select.split_members([("scaledgd", 0.1), ("gd", math.nan), ("adam", 0.5)]) == [("adam", 0.5)]


def test_summary_comparison_and_table_modules_start_without_torch():
    """The small jobs after training import these; torch's import would cost each about a second."""
    code = ("import sys; import gaugelab.sensing.select, gaugelab.paper.compare, gaugelab.paper.tables, "
            "gaugelab.sensing.dial, gaugelab.core.records, gaugelab.paper.published; print('torch' in sys.modules)")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1] / "src")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.strip() == "False"
