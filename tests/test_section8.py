"""Section 8's phase diagram (spec: sensing.md §1.4, §6 S5, §13.1-13.2, §15.4): the spectral-tail
target, the crossing tau*, the arms as sensing experiments, and `snakemake section8` on the smoke
configuration as a user runs it."""

import math
import subprocess
import sys

import pandas as pd
import pytest
from conftest import SMOKE, snakemake_smoke
import torch

from gaugelab.paper import compare, opt_in_quantities, published
from gaugelab.core import config, records
from gaugelab.sensing import controls, phase, runner, select, testbed


def test_the_tail_target_follows_the_spec():
    """§1.4: X = sqrt(1 - tau²) X₃ + tau E with E orthogonal to U*'s columns and V*'s rows, |E| = |X₃|,
    so |X| = |X₃|; E is an extra draw before A, so at tau = 0 X is Table 2's target but A is not."""
    n, r, m, seed, tau = 12, 3, 60, 42, 0.35
    inst = testbed.make_tail_instance(n, r, m, seed, tau)
    g = torch.Generator().manual_seed(seed)
    u = torch.randn(n, r, generator=g) / math.sqrt(r)
    v = torch.randn(n, r, generator=g) / math.sqrt(r)
    head = u @ v.T
    tail = (inst.X - math.sqrt(1 - tau ** 2) * head) / tau
    assert torch.linalg.norm(inst.X) == pytest.approx(float(torch.linalg.norm(head)), rel=1e-5)
    assert torch.linalg.norm(tail) == pytest.approx(float(torch.linalg.norm(head)), rel=1e-5)
    assert float(torch.linalg.norm(u.T @ tail)) < 1e-5 and float(torch.linalg.norm(tail @ v)) < 1e-5
    plain, zero = testbed.make_instance(n, r, m, seed), testbed.make_tail_instance(n, r, m, seed, 0.0)
    assert torch.equal(zero.X, plain.X) and not torch.equal(zero.A, plain.A)
    assert torch.equal(inst.y, inst.A @ inst.X.reshape(-1))


def test_a_tail_arm_runs_on_its_target_and_its_records_say_so():
    exp = {**config.load()["zoo"], "n": 8, "rank": 2, "width": 8, "budget": 200, "tail": 0.2}
    rec = runner.run_cells("phase_coarse_tau0p2", exp, "gd", 42, [0.01])[0]
    assert rec["config"]["tail"] == 0.2
    plain = runner.run_settings({k: v for k, v in exp.items() if k != "tail"}, "gd", "float32")
    assert "tail" not in plain and runner.run_settings(exp, "gd", "float32")["tail"] == 0.2


def test_s5_gates_at_1e4_not_at_the_bar():
    rest = {"rec_sd": 0.0, "erank": 3.0, "nuc": 1.0, "bal": 0.0, "steps": 2e4, "max_steps": 2e4, "seeds": 3,
            "interpolated": 0, "diverged": 0}
    cells = pd.DataFrame([
        {"method": "gd", "lr": 0.01, "rec": 0.30, "train": 5e-5, "worst_train": 5e-5, **rest},
        {"method": "gd", "lr": 0.03, "rec": 0.20, "train": 2e-4, "worst_train": 2e-4, **rest},
    ])
    scored = select.select(cells, {"gd": [0.01, 0.03]}, "S5", 1e-7)
    chosen = scored[scored["selected"]].iloc[0]
    assert chosen["lr"] == 0.01 and bool(chosen["gated"])  # gated at 1e-4 although above 1e-7
    assert select.select(cells, {"gd": [0.01, 0.03]}, "S2", 1e-7).query("selected")["lr"].iloc[0] == 0.03


@pytest.mark.parametrize("d, expected", [
    ([-0.2, -0.1, -0.05, 0.01, 0.2], 0.35),   # the first grid point at or beyond the crossing
    ([-0.2, -0.1, 0.0, 0.1, 0.2], 0.2),       # d = 0 counts as ceded
    ([-0.2, -0.1, -0.05, -0.01, -0.2], math.nan),  # Muon below GD throughout: no crossing
    ([0.1, -0.1, -0.05, -0.01, -0.2], math.nan),   # above at tau = 0 is not a crossing
])
def test_the_crossing_walks_tau_upwards(d, expected):
    star = phase.crossing([0, 0.1, 0.2, 0.35, 0.5], d)
    assert star == expected or (math.isnan(star) and math.isnan(expected))


def test_the_arms_follow_the_protocol_and_share_their_common_runs():
    cfg = config.load()
    arms = phase.arms(cfg)
    assert len(arms) == 18 and all(exp["selection"] == "S5" and exp["budget"] == 20000 for exp in arms.values())
    coarse = arms["phase_coarse_tau0p35"]
    assert coarse["tail"] == 0.35 and coarse["decayed"] == ["muon"] and coarse["grids"]["muon"] == [0.03, 0.1]
    assert arms["phase_decay_tau0"]["grids"]["shampoo"] == [0.03, 0.1, 0.3]
    assert sorted(arms["phase_decay_tau0"]["decayed"]) == ["adam", "gd", "muon", "shampoo"]
    sources = controls.run_sources(controls.sensing_experiments(cfg), cfg["seeds"], cfg["dtype"])
    # GD at a constant lr is the coarse grid's run; decayed Muon too; undecayed Muon is the const arm's own
    assert sources[("phase_const_tau0p2", "gd", 0.01, 42)] == "phase_coarse_tau0p2"
    assert sources[("phase_decay_tau0p2", "muon", 0.1, 42)] == "phase_coarse_tau0p2"
    assert sources[("phase_const_tau0p2", "muon", 0.1, 42)] == "phase_const_tau0p2"
    assert sources[("phase_coarse_tau0", "gd", 0.01, 42)] == "phase_coarse_tau0"  # not the zoo's: another target


def test_the_phase_tables_read_the_selected_rows():
    rows = []
    for tau, gd, muon in ((0.0, 0.10, 0.01), (0.2, 0.12, 0.05), (0.35, 0.15, 0.16)):
        for mode, method, rec in (("coarse", "gd", gd), ("coarse", "muon", muon), ("coarse", "adam", 0.5),
                                  ("const", "gd", gd), ("decay", "muon", muon), ("decay", "gd", gd - 0.08)):
            rows.append({"mode": mode, "tau": tau, "method": method, "lr": 0.01, "rec": rec, "rec_sd": 0.01,
                         "erank": 3.0, "train": 1e-8, "gated": True})
    table = pd.DataFrame(rows)
    assert phase.tau_star(table) == 0.35
    assert phase.schedule_crossings(table) == {"muon+dec vs gd": 0.35, "muon+dec vs gd+dec": 0.2}
    grid = phase.phase_rows(table)
    assert list(grid["verdict"]) == ["Muon", "Muon", "GD"] and set(grid["train check"]) == {"pass"}
    (row,) = compare.rows(published.SECTION8, opt_in_quantities.section8(table)).to_dict("records")
    assert row["verdict"] == compare.EXACT and "0.35: +0.0100" in row["note"]


def test_section8_values_need_their_target():
    merged = compare.complete(compare.rows([], {}))
    rows = merged[merged["section"] == "Section 8"]
    assert list(rows["verdict"]) == [compare.NOT_RUN] * 2
    assert "snakemake section8" in rows["note"].iloc[0] and "fine grid" in rows["note"].iloc[1]


@pytest.mark.workflow
def test_snakemake_section8_on_the_smoke_configuration(tmp_path):
    """The opt-in target alone trains only its arms, writes its tables, figure and rows; the default
    target then merges the rows into the comparison (its DAG reads the part)."""
    proc = snakemake_smoke(tmp_path, "section8", "--cores", "2")
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert not (tmp_path / "results" / "zoo").exists()  # nothing of the default target ran
    part = records.read_table(tmp_path / "results" / "section8" / "comparison.csv")
    assert list(part["quantity"]) == ["tau_star"] and part["verdict"].iloc[0] in (compare.EXACT, compare.DIFFERS)
    assert (tmp_path / "results" / "figures" / "phase.png").stat().st_size > 10_000
    assert "muon (no decay)" in (tmp_path / "results" / "tables" / "phase_schedule.html").read_text()
    assert "$\\tau$" in (tmp_path / "results" / "tables" / "phase.tex").read_text()
    out = tmp_path / "cli" / "phase.tex"  # `gaugelab table phase` renders the job's table byte for byte
    selected = tmp_path / "results" / "section8" / "selected.csv"
    subprocess.run([sys.executable, "-m", "gaugelab.cli", "table", "phase", str(selected), "--config", str(SMOKE),
                    "-o", str(out)], check=True, capture_output=True)
    for suffix in (".tex", ".html"):
        assert out.with_suffix(suffix).read_bytes() == (tmp_path / f"results/tables/phase{suffix}").read_bytes()
    dag = snakemake_smoke(tmp_path, "--dag", "--cores", "1", "results/paper/comparison.csv")
    assert dag.returncode == 0 and "phase_comparison" in dag.stdout
    again = snakemake_smoke(tmp_path, "section8", "-n", "--cores", "1")
    assert "Nothing to be done" in again.stdout + again.stderr


@pytest.mark.parametrize("tau_star", [0.2, 0.35, 0.5])
def test_the_phase_figures_muon_label_follows_tau_star_inside_the_axes(tau_star):
    """§15.4 places "Muon cedes to GD" at (tau* + 0.115, 0.235) for tau* = 0.2; a larger computed
    tau* moves it left just enough to end inside the axes."""
    from matplotlib.text import Text

    from gaugelab.paper import figures

    taus = [0, 0.05, 0.1, 0.2, 0.35, 0.5]
    rows = [{"tau": t, "method": m, "rec": rec + 0.1 * t, "rec_sd": 0.01}
            for m, rec in (("adam", 0.6), ("gd", 0.1), ("muon", 0.0), ("shampoo", 0.3)) for t in taus]
    fig = figures.figure_phase(pd.DataFrame(rows), tau_star, published_tau=0.35)
    ax = fig.axes[0]
    label = next(t for t in ax.texts if t.get_text() == "Muon cedes to GD")
    fig.canvas.draw()
    assert Text.get_window_extent(label).x1 <= ax.get_window_extent().x1  # the text alone, not its arrow
    x, y = label.xyann
    assert y == 0.235 and (x == pytest.approx(0.315) if tau_star == 0.2 else x < tau_star + 0.115)
