"""The phase diagram's GPU fine grid (spec: sensing.md §13.3, §15.4): its arms under the GPU
protocol, S5 over all seeds of a cell, every crossing, and its part of `snakemake gpu` on the
smoke configuration (on the CPU)."""

import math
import subprocess
import sys

import pandas as pd
import pytest
from conftest import SMOKE, snakemake_smoke

from gaugelab import configuration
from gaugelab.core import config, records
from gaugelab.paper import compare, opt_in_quantities, published, table_files
from gaugelab.sensing import gpu, ladder, phase, phase_fine


def test_the_arms_follow_the_protocol():
    arms = phase_fine.arms(config.validate({}))
    assert len(arms) == 14 * 2  # fourteen tails at n = 40 and n = 128
    small, large = arms["phase_fine_n40_tau0p2"], arms["phase_fine_n128_tau0p2"]
    assert small["selection_seeds"] == [42, 123, 456, 789, 1011, 1213, 1415, 1617, 1819, 2021]
    assert large["selection_seeds"] == [42, 123, 456] and not large["extension_seeds"]
    assert small["loop"] == gpu.LOOP and small["width"] == 40 and large["width"] == 128 and small["tail"] == 0.2
    assert small["decayed"] == ["muon"] and small["budget"] == 20000 and not small["cosine_all"]
    # base grids at n = 40; scaled at 128 as the ladder's: 40/n, sqrt(40/n), sqrt(n/40), 12 decimals
    assert small["grids"]["gd"] == [0.01, 0.03] and large["grids"]["gd"] == [0.003125, 0.009375]
    assert large["grids"]["muon"] == [round(0.03 * math.sqrt(40 / 128), 12), round(0.1 * math.sqrt(40 / 128), 12)]
    assert large["grids"]["scalar_adam"][0] == round(1e-3 * math.sqrt(128 / 40), 12)
    # one stage, every lr on every seed; the tail names the bundle's settings
    assert ladder.stages(small) == [ladder.SELECTION]
    assert len(ladder.stage_cells(ladder.SELECTION, small, "gd")) == 2 * 10
    what, settings = ladder.bundle_identity("phase_fine_n40_tau0p2", small, "gd", ladder.SELECTION)
    assert what["experiment"] == "phase_fine_n40_tau0p2" and settings["tail"] == 0.2


def test_a_figure_off_the_grid_is_refused_naming_the_key():
    with pytest.raises(config.ConfigError, match="phase_fine/figure/size"):
        configuration.validate({"phase_fine": {"figure": {"size": "n64"}}}, build_optimizers=False)
    with pytest.raises(config.ConfigError, match="phase_fine/figure/taus"):
        configuration.validate({"phase_fine": {"figure": {"taus": [0, 0.33]}}}, build_optimizers=False)


def test_every_crossing_is_listed_and_the_first_is_tau_star():
    taus = [0, 0.1, 0.2, 0.3, 0.4]
    d = [-0.1, 0.05, -0.02, -0.01, 0.2]  # Muon cedes at 0.1, wins again, cedes at 0.4
    assert phase.crossings(taus, d) == [0.1, 0.4] and phase.crossing(taus, d) == 0.1
    assert phase.crossings(taus, [-1.0] * 5) == [] and math.isnan(phase.crossing(taus, [-1.0] * 5))


def _selected(recs: dict[str, list[float]], taus: list[float], mode: str = "fine_n40") -> pd.DataFrame:
    rows = [{"mode": mode, "tau": t, "method": m, "lr": 0.01, "rec": r, "rec_sd": 0.01, "erank": 3.0,
             "train": 1e-8, "gated": True} for m, values in recs.items() for t, r in zip(taus, values)]
    return pd.DataFrame(rows)


def test_the_fine_tau_star_is_read_at_the_papers_size_and_the_table_lists_every_crossing():
    taus = [0, 0.1, 0.2, 0.3]
    selected = pd.concat([_selected({"gd": [0.1, 0.1, 0.1, 0.1], "muon": [0.0, 0.05, 0.2, 0.3]}, taus),
                          _selected({"gd": [0.1] * 4, "muon": [0.0] * 4}, taus, "fine_n128")])
    rows = compare.rows(published.SECTION8, opt_in_quantities.phase_fine(selected, "n40"))
    assert list(rows["row"]) == ["tau* (fine GPU grid, 10 seeds, n = 40)"]
    assert rows["verdict"].iloc[0] == compare.EXACT and "d(tau)" in rows["note"].iloc[0]
    grid, tex, html = table_files.phase_fine(selected)
    assert list(grid["size"]) == ["n40"] * 4 + ["n128"] * 4
    assert "n40: τ* ~ 0.2 (Muon cedes to GD; 4% tail energy)" in html and "n128: no crossing" in html
    assert "GD sd" in html and "\\toprule" in tex


@pytest.mark.workflow
def test_the_fine_grid_of_the_gpu_target_on_the_smoke_configuration(tmp_path):
    """The fine grid's products alone (the gpu target's Table 9 pairs are left out here) train only
    its arms, one float64 bundle per (tail, method), and write its table, figure and row."""
    products = ["results/phase_fine/comparison.csv", "results/figures/phase_fine.png",
                "results/tables/phase_fine.html"]
    proc = snakemake_smoke(tmp_path, *products, "--cores", "2")
    assert proc.returncode == 0, proc.stderr[-4000:]
    bundle = records.read_bundle(tmp_path / "results/runs/phase_fine/phase_fine_n8_tau0p2/muon/selection.json")
    assert len(bundle) == 2 and {r["seed"] for r in bundle} == {42, 123}
    assert all(r["config"]["dtype"] == "float64" and r["config"]["tail"] == 0.2 and r["config"]["loop"] == "gpu"
               for r in bundle)
    part = records.read_table(tmp_path / "results/phase_fine/comparison.csv")
    assert list(part["quantity"]) == ["tau_star"] and part["verdict"].iloc[0] in (compare.EXACT, compare.DIFFERS)
    assert (tmp_path / "results/figures/phase_fine.png").stat().st_size > 10_000
    assert "n8:" in (tmp_path / "results/tables/phase_fine.html").read_text()
    assert not (tmp_path / "results" / "zoo").exists()  # nothing of the default target ran
    out = tmp_path / "cli" / "phase_fine.tex"  # `gaugelab table phase_fine` renders the job's table byte for byte
    subprocess.run([sys.executable, "-m", "gaugelab.cli", "table", "phase_fine",
                    str(tmp_path / "results/phase_fine/selected.csv"), "--config", str(SMOKE), "-o", str(out)],
                   check=True, capture_output=True)
    for suffix in (".tex", ".html"):
        assert out.with_suffix(suffix).read_bytes() == (tmp_path / f"results/tables/phase_fine{suffix}").read_bytes()
    again = snakemake_smoke(tmp_path, *products, "-n", "--cores", "1")
    assert "Nothing to be done" in again.stdout + again.stderr
