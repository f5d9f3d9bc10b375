"""The Section 6 / Appendix D.5 target (`snakemake twins`) on the smoke configuration: per-pair
jobs, Table 3, the D.5 table, Figure 2 and the comparison rows, in a temporary directory."""

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from gaugelab.paper import published
from gaugelab.core import records

pytestmark = pytest.mark.workflow

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / "tests" / "config" / "smoke.yaml"
MODEL = "cpu-mod11-L2d16h2"  # the smoke config's small model
OUTPUTS = ["results/tables/table3.tex", "results/tables/table3.html", "results/tables/table3_qk.tex",
           "results/tables/table3_qk.html", "results/tables/d5.tex", "results/tables/d5.html",
           "results/figures/figure2.pdf", "results/figures/figure2.png", "results/twins/comparison.csv",
           "results/twins/pairs.csv", "results/twins/d5.csv"]


def snakemake(workdir, *args):
    cmd = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "--directory", str(workdir),
           "--configfile", str(SMOKE), *args]
    return subprocess.run(cmd, capture_output=True, text=True)


@pytest.fixture(scope="module")
def twins_run(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("twins")
    proc = snakemake(workdir, "--cores", "2", "twins")
    assert proc.returncode == 0, proc.stderr[-5000:]
    return workdir


def test_twins_target_writes_every_output(twins_run):
    for path in OUTPUTS:
        assert (twins_run / path).stat().st_size > 0, path
    runs = sorted((twins_run / "results/runs/twins" / MODEL).rglob("*.json"))
    assert len(runs) == 9  # 5 S6-main + 2 S6-noise + 2 more D.5 pairs; shared pairs run once
    assert all(records.is_valid(p, records.TWIN_SCHEMA) for p in runs)
    identity = records.read_twin(twins_run / f"results/runs/twins/{MODEL}/adam/identity/init42_seed0.json")
    assert identity["identity_exact"] is True and all(p[1] == 0.0 for p in identity["curve"])
    tex = (twins_run / "results/tables/table3.tex").read_text()
    assert "Adam, $A{=}I$" in tex and tex.count("\\\\") >= 9 and "dec(100)" in tex
    assert (twins_run / "results/figures/figure2.png").read_bytes()[:4] == b"\x89PNG"
    comparison = pd.read_csv(twins_run / "results/twins/comparison.csv")
    assert set(comparison["source"]) == {"Table 3", "Section 6", "Figure 2", "Figure 2 reference log", "Appendix D.5"}
    got = comparison.set_index(["row", "quantity"])["verdict"]
    assert got[("Adam identity", "max_drift")] == "exact"
    # App. D.5's released log (attention.md §12.5): a row each that the smoke sets' D5 pairs give
    logged = comparison[comparison["where"] == published.D5_LOG].set_index(["row", "quantity"])
    assert set(logged.index) <= {(v.row, v.quantity) for v in published.D5_LOGGED}
    for key in [("Adam gauge", "final_min"), ("Adam gauge", "final_max"), ("every twin", "acc_gap"),
                ("Adam gauge", "acc_gap")]:
        assert logged.loc[key, "verdict"] != "not run here" and pd.notna(logged.loc[key, "reproduced"]), key
    assert not logged["reproduced"].isna().any()  # a value the records cannot give has no row (not run here)


def test_twins_target_is_complete(twins_run):
    proc = snakemake(twins_run, "-n", "--cores", "1", "twins")
    assert "Nothing to be done" in proc.stdout + proc.stderr


def test_default_config_runs_each_distinct_pair_once(tmp_path):
    """S6-main (5) + S6-noise (4) + D5-multiseed (16) share 6 pairs: 19 pairs, whose copy 1 is one
    of 8 (optimizer x init seed), at most three pairs a job: Adam init 42's six in two parts, 9 jobs."""
    cmd = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "--directory", str(tmp_path),
           "--configfile", str(ROOT / "config.yaml"), "-n", "twins", "--quiet", "rules"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    counts = {line.split()[0]: int(line.split()[1]) for line in (proc.stdout + proc.stderr).splitlines()
              if len(line.split()) == 2 and line.split()[1].isdigit()}
    runs = {rule: n for rule, n in counts.items() if rule.startswith("twins_run_")}
    assert len(runs) == 9 and set(runs.values()) == {1}
    assert counts["twins_run_adam_init42_part0"] == counts["twins_run_adam_init42_part1"] == 1
    assert "twins_run_adam_init42" not in runs and "twins_run_sgd_init123" in runs
    assert counts["table3"] == counts["figure2"] == counts["table_d5"] == counts["twins_comparison"] == 1
