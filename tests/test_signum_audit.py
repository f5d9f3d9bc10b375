"""App. D.10's signum audit (spec: sensing.md §12): the linear anneal, the arms (the zoo's own
budget with the cosine anneal is Table 2's runs), P1's diagnostics hook, the consistency row, and
`snakemake signum_audit` on the smoke configuration as a user runs it."""

import math

import pandas as pd
import pytest
from conftest import snakemake_smoke

from gaugelab.paper import compare, opt_in_quantities, published
from gaugelab.core import config, records
from gaugelab.sensing import controls, loop, runner, signum_audit, signum_diagnostics, testbed

TINY = {"zoo": {"n": 8, "rank": 2, "width": 8, "budget": 400},
        "signum_audit": {"budgets": [200, 400], "taus": [0.2], "long_budget": 400, "diagnose_every": 100}}


def test_the_linear_anneal_ends_at_zero_and_names_its_runs():
    assert loop.linear_factor(0, 400) == 1.0 and loop.linear_factor(400, 400) == 0.0
    assert loop.linear_factor(100, 400) == 0.75
    with pytest.raises(ValueError, match="unknown anneal"):
        loop.train(testbed.make_instance(4, 1, 8, 0), [], [], *testbed.init_factors(4, 4, 1e-3, 0),
                      budget=1, decayed=False, anneal="step")
    cfg = config.validate(TINY)
    arms = signum_audit.arms(cfg)
    assert runner.run_settings(arms["signum_audit_T200_lin"], "signum", "float32")["schedule"] == "linear"
    assert runner.run_settings(arms["signum_audit_T200_cos"], "signum", "float32")["schedule"] == "cosine"
    assert "anneal" not in runner.run_settings(cfg["zoo"], "signum", "float32")  # Table 2's settings as they were


def test_every_audit_arm_runs_all_its_steps_on_its_own_runs():
    """Table 2's runs stop early at the bar; the audit's run all T steps, so none is shared."""
    cfg = config.validate(TINY)
    sources = controls.run_sources(controls.sensing_experiments(cfg), cfg["seeds"], cfg["dtype"])
    assert sources[("signum_audit_T400_cos", "signum", 0.003, 42)] == "signum_audit_T400_cos"
    arms = signum_audit.arms(cfg)
    assert not any(arm["early_stop"] for arm in arms.values()) and arms["signum_audit_tail_tau0p2"]["tail"] == 0.2


def test_p1_observes_every_window_and_ends_on_the_runs_own_numbers():
    cfg = config.validate({**TINY, "seeds": [42, 123]})
    rows, recs = signum_diagnostics.run_diagnostics(cfg)
    assert sorted(set(rows["step"])) == [100, 200, 300, 400] and len(rows) == 8
    for rec in recs:
        last = rows[(rows["seed"] == rec["seed"]) & (rows["step"] == 400)].iloc[0]
        assert rec["steps"] == 400 and last["rec"] == pytest.approx(rec["rec"], rel=1e-6)
    assert rows["momentum top energy"].between(0, 1).all() and rows["alignment dW.X*"].abs().le(1 + 1e-9).all()
    assert (rows["W s1"] >= rows["W s2"]).all()


def _table(rec, all_steps=True):
    return pd.DataFrame([{"part": "P2", "T": 400, "anneal": "cos", "tau": math.nan, "lr": 0.003, "rec": rec,
                          "seed recs": "", "all steps": all_steps}])


def test_the_audit_cell_is_read_against_table2s_ensemble():
    zoo = pd.DataFrame([{"method": "signum", "lr": 0.003, "rec": 0.4468}])
    key = published.SIGNUM_AUDIT[0].key
    spread = {"sensitivity": 0.1, "ensemble": (0.4468, 0.42, 0.47, 0.45)}
    inside = opt_in_quantities.signum_audit(_table(0.4470), zoo, spread, 400, 0.003)
    assert compare.rows(published.SIGNUM_AUDIT, inside)["verdict"].iloc[0] == compare.WITHIN
    alone = opt_in_quantities.signum_audit(_table(0.4470), zoo, {"sensitivity": math.nan}, 400, 0.003)
    assert compare.rows(published.SIGNUM_AUDIT, alone)["verdict"].iloc[0] == compare.DIFFERS
    stopped = opt_in_quantities.signum_audit(_table(0.4454, all_steps=False), zoo, spread, 400, 0.003)[key]
    assert "stopped before" in stopped.note


@pytest.mark.workflow
def test_snakemake_signum_audit_on_the_smoke_configuration(tmp_path):
    proc = snakemake_smoke(tmp_path, "signum_audit", "--cores", "2")
    assert proc.returncode == 0, proc.stderr[-4000:]
    table = records.read_table(tmp_path / "results" / "signum_audit" / "horizon.csv")
    assert len(table) == 2 * (2 * 2 + 2)  # lrs x (budgets x anneals + taus)
    assert table["all steps"].all()  # no early stop
    row = records.read_table(tmp_path / "results" / "signum_audit" / "comparison.csv").iloc[0]
    assert row["quantity"] == "rec" and row["verdict"] != compare.NOT_RUN and "Table 2's cell" in row["note"]
    diagnostics = records.read_table(tmp_path / "results" / "signum_audit" / "diagnostics.csv")
    assert sorted(set(diagnostics["step"])) == [100, 200, 300, 400]
    again = snakemake_smoke(tmp_path, "signum_audit", "-n", "--cores", "1")
    assert "Nothing to be done" in again.stdout + again.stderr
