"""The GPU problem-size ladder (App. D.9, Table 11; spec sensing.md §14): the GPU protocol's own
pieces on the CPU in float64 (rounded m, casts, the GPU loop's statuses), its arms and grids, and
the opt-in target `snakemake ladder` on the smoke configuration."""

from __future__ import annotations

import math
import subprocess
import sys

import pytest
import torch
from conftest import SMOKE, snakemake_smoke

from gaugelab import configuration
from gaugelab.core import config, records
from gaugelab.paper import compare, opt_in_quantities, pages, published
from gaugelab.sensing import dial_gpu, gpu, ladder, loop, runner, testbed

EXP = {"n": 8, "rank": 2, "width": 8, "measurements_per_dof": 2.0, "init": 1e-3, "budget": 400, "tol": 1e-7,
       "check_every": 200, "loop": gpu.LOOP, "decayed": []}


def test_m_rounds_half_to_even_where_the_cpu_truncates():
    assert gpu.measurements(64, 3, 1.25) == 469 and testbed.measurements(64, 3, 1.25) == 468  # 468.75
    assert gpu.measurements(64, 5, 1.5) == 922  # 922.5: Python's round, half to even
    arm = {**EXP, "n": 64, "rank": 3, "width": 64, "measurements_per_dof": 1.25}
    assert runner.problem_size(arm)["m"] == 469 and runner.problem_size({**arm, "loop": "canonical"})["m"] == 468


def test_float64_instance_is_the_float32_draw_cast_with_y_after_the_cast():
    inst, u0, v0 = runner.prepare(EXP, 42, "float64", torch.device("cpu"))
    m = runner.problem_size(EXP)["m"]
    ref = testbed.make_instance(8, 2, m, 42)
    ref_u, ref_v = testbed.init_factors(8, 8, 1e-3, 42)
    assert inst.A.dtype == u0.dtype == torch.float64
    assert torch.equal(inst.A, ref.A.double()) and torch.equal(inst.X, ref.X.double())
    assert torch.equal(u0, ref_u.double()) and torch.equal(v0, ref_v.double())
    assert torch.equal(inst.y, inst.A @ inst.X.reshape(-1))  # after the cast, not the float32 y cast
    assert not torch.equal(inst.y, ref.y.double())


def test_gpu_loop_keeps_a_diverged_runs_train_and_blanks_its_metrics():
    cells = [("gd", 42, 100.0, 0.0), ("gd", 42, 0.05, 0.0)]
    diverged, fine = runner.run_batch("ladder_test", EXP, cells, dtype="float64", threads=1)
    assert diverged["status"] == "diverged" and diverged["steps"] < EXP["budget"]
    assert diverged["train"] > loop.DIVERGENCE_BOUND or not math.isfinite(diverged["train"])
    assert not math.isnan(diverged["train"])
    assert all(math.isnan(diverged[k]) for k in ("rec", "erank", "nuc", "bal"))
    assert math.isfinite(fine["rec"]) and fine["config"]["dtype"] == "float64" and fine["config"]["loop"] == "gpu"
    canonical = runner.run_batch("ladder_test", {**EXP, "loop": "canonical"}, cells[:1], dtype="float64", threads=1)[0]
    assert canonical["status"] == "diverged" and math.isnan(canonical["train"])  # §2.1: all NaN
    assert gpu.status(diverged["status"], diverged["train"]) == gpu.DIVERGED


@pytest.mark.parametrize("loop_status, train, expected", [
    ("interpolated", 5e-8, "interp"), ("budget", 5e-8, "interp"), ("budget", 1e-7, "loose"),
    ("budget", 9e-5, "loose"), ("budget", 1e-4, "n/i"), ("diverged", 1e9, "diverged"),
])
def test_gpu_status_bars(loop_status, train, expected):
    assert gpu.status(loop_status, train) == expected


def test_scaledgd_trains_in_the_batched_loop():
    """The control's state copy of (U, V) stays the loop's factors as runs leave the batch."""
    cells = [("scaledgd", 42, lr, 0.0) for lr in (10.0, 1e-2, 1e-3)]  # the first leaves at step 3
    runs = runner.run_batch("ladder_test", EXP, cells, dtype="float64", threads=1)
    assert runs[0]["status"] == "diverged" and all(math.isfinite(r["rec"]) for r in runs[1:])
    alone = runner.run_batch("ladder_test", EXP, cells[1:2], dtype="float64", threads=1)[0]
    # the native numerics may round a batch differently in the last bits; a misaligned copy would not be close
    assert alone["rec"] == pytest.approx(runs[1]["rec"], rel=1e-9)
    assert alone["train"] == pytest.approx(runs[1]["train"], rel=1e-6)


# --- the arms, lr*, Table 11 and its statements ----------------------------------------------------


def test_the_default_arms_are_the_papers():
    arms = ladder.arms(config.load())
    assert list(arms) == ["canary", "n64", "n96", "n128", "n192", "n256", "n384", "n64_r2", "n64_r5", "n64_r8",
                          "n64_r12", "n64_mdof1p25", "n64_mdof1p5", "n64_mdof3", "n64_mdof4"]
    canary, n64, n128, n384 = arms["canary"], arms["n64"], arms["n128"], arms["n384"]
    assert canary["extension_seeds"] == [] and canary["selection_seeds"] == [42, 123, 456] and not canary["cosine_all"]
    assert len(n64["extension_seeds"]) == 7 and n64["cosine_all"] and n64["width"] == 64 and n64["loop"] == "gpu"
    assert sorted(n64["decayed"]) == ["lion", "muon", "signum"]  # RMSProp constant here, unlike Table 2
    assert n64["grids"]["gd"][0] == 0.000625 and n64["grids"]["muon"][-1] == round(0.3 * math.sqrt(40 / 64), 12)
    assert n64["grids"]["adam"][0] == round(1e-4 * math.sqrt(64 / 40), 12) and n64["budget"] == 40000
    assert "scaledgd" in n128["grids"] and "scaledgd" not in n64["grids"]
    assert n384["budget"] == 60000 and list(n384["grids"]) == ["gd", "scalar_adam", "muon", "shampoo", "adam"]
    assert arms["n64_r5"]["rank"] == 5 and arms["n64_r5"]["extension_seeds"] == [789, 1011]
    assert runner.problem_size(arms["n64_mdof1p25"])["m"] == 469  # round(468.75)
    assert ladder.stages(canary) == ["selection"] and ladder.stages(n64) == ["selection", "extension", "cosine_all"]


def test_config_refuses_an_arm_it_cannot_run():
    with pytest.raises(config.ConfigError, match="ladder/grids.*arm a runs lion"):
        configuration.validate({"ladder": {"grids": {"gd": [0.1]}, "arms": {"a": {"n": 8, "methods": ["gd", "lion"]}}}})
    with pytest.raises(config.ConfigError, match="ladder/extension_seeds"):
        configuration.validate({"ladder": {"extension_seeds": [42, 7]}})
    if not torch.cuda.is_available():  # a device this machine lacks is refused at start-up, as at every device key
        with pytest.raises(config.ConfigError, match="ladder/device.*no CUDA device"):
            configuration.validate({"ladder": {"device": "cuda"}})


def run(method, lr, seed, rec, train, status="budget", erank=3.0, steps=400):
    return {"experiment": "ladder_a", "method": method, "lr": lr, "seed": seed, "perturbation": 0.0, "status": status,
            "steps": steps, "train": train, "rec": rec, "erank": erank, "nuc": 1.0, "bal": 0.0,
            "environment": {"numerics": "native"}}


def test_lr_star_is_s5_on_the_selection_seeds_and_its_cell_reads_every_seed():
    exp = {"grids": {"gd": [0.01, 0.03, 0.1]}, "tol": 1e-7, "kind": "size", "n": 8, "rank": 2,
           "measurements_per_dof": 2.0, "budget": 400}
    selection = [run("gd", 0.01, s, 0.30, 5e-5) for s in (1, 2)] + [run("gd", 0.03, s, 0.20, 2e-4) for s in (1, 2)]
    selection += [run("gd", 0.1, s, math.nan, 1e9, "diverged") for s in (1, 2)]
    assert ladder.lr_star(selection, exp, "gd") == (0.01, True)  # gated at 1e-4; the grid's first: EDGE
    extension = [run("gd", 0.01, 3, 0.36, 5e-8, "interpolated")]
    cosine = [run("gd", 0.01, s, 0.1, 1e-8) for s in (1, 2, 3)]
    row = ladder.cell("a", exp, "gd", {"selection": selection, "extension": extension, "cosine_all": cosine})
    assert row["seeds"] == 3 and row["rec"] == pytest.approx(0.32) and row["cosine_all_rec"] == pytest.approx(0.1)
    assert row["rec_sd"] == pytest.approx(math.sqrt(((0.02 ** 2) * 2 + 0.04 ** 2) / 3))  # population sd
    assert row["worst_train"] == 5e-5 and row["statuses"] == "2 loose, 1 interp" and row["edge"]
    assert ladder.stage_cells("extension", {**exp, "extension_seeds": [3]}, "gd", selection) == [("gd", 3, 0.01, 0.0)]
    lost = [run("gd", 0.01, 4, math.nan, math.nan, "diverged")]  # a NaN loss: its train is NaN too
    worse = ladder.cell("a", exp, "gd", {"selection": selection, "extension": lost + extension})
    assert math.isnan(worse["worst_train"]) and math.isnan(worse["rec"])
    assert worse["statuses"] == "2 loose, 1 diverged, 1 interp"


def test_the_dial_arm_follows_the_protocol():
    """§14.6: Adam-p (RMS, the GPU port) at n = 40 on 10 seeds and n = 128 on 5, five p, three lrs
    times sqrt(n/40) rounded to 12 decimals, r = 3, m/dof = 2, T = 30000, constant lr, the GPU loop."""
    arms = dial_gpu.arms(config.load())
    assert list(arms) == ["dial_gpu_n40", "dial_gpu_n128"]
    small, large = arms["dial_gpu_n40"], arms["dial_gpu_n128"]
    assert small["selection_seeds"] == [42, 123, 456, 789, 1011, 1213, 1415, 1617, 1819, 2021]
    assert large["selection_seeds"] == [42, 123, 456, 789, 1011] and ladder.stages(large) == [ladder.SELECTION]
    assert list(small["grids"]) == ["p1", "rms_p0.75", "rms_p0.5", "rms_p0.25", "rms_p0"]
    assert small["grids"]["p1"] == [3e-4, 1e-3, 3e-3]
    assert large["grids"]["rms_p0"] == [round(lr * math.sqrt(128 / 40), 12) for lr in (3e-4, 1e-3, 3e-3)]
    assert (large["rank"], large["measurements_per_dof"], large["budget"], large["decayed"]) == (3, 2.0, 30000, [])
    assert large["loop"] == "gpu" and large["width"] == 128 and runner.problem_size(large)["m"] == 1518
    rules = dial_gpu.rules(small)
    assert [r.hparams["p"] for r in rules.values()] == [1.0, 0.75, 0.5, 0.25, 0.0]
    assert {r.hparams["outer_eps"] for r in rules.values()} == {False} and dial_gpu.rules(large | {"ps": {}}) == {}
    assert dial_gpu.rules(ladder.arms(config.load())["n64"]) is None  # the ladder's methods are the registry's
    what, _ = ladder.bundle_identity("dial_gpu_n40", small, "rms_p0.5", ladder.SELECTION)
    assert what["experiment"] == "dial_gpu_n40"


def test_the_dial_arms_table_selects_over_every_seed():
    exp = {"size": "n8", "n": 8, "ps": {"p1": 1.0}, "grids": {"p1": [0.01, 0.03]}, "tol": 1e-7}
    runs = [run("p1", 0.01, s, 0.30, 5e-5, steps=st) for s, st in ((1, 401), (2, 600))]
    runs += [run("p1", 0.03, s, 0.10, 2e-4) for s in (1, 2)]  # better rec, but not gated at 1e-4
    row = dial_gpu.table({"a": exp}, {("a", "p1"): runs}).iloc[0]
    assert (row["lr"], row["edge"], row["seeds"], row["steps"], row["gated"]) == (0.01, True, 2, 500, True)
    assert row["rec_sd"] == pytest.approx(0.0) and row["statuses"] == "2 loose"
    runs[1]["steps"] = 601
    assert dial_gpu.table({"a": exp}, {("a", "p1"): runs}).iloc[0]["steps"] == 501  # int(mean), truncated


def _cell(arm, kind, n, method, rec):
    return {"arm": arm, "kind": kind, "n": n, "rank": 3, "mdof": 2.0, "method": method, "rec": rec}


def test_split_leaves_out_scaledgd_and_the_statements_read_the_size_rows():
    cells = [_cell("canary", "canary", 40, m, r) for m, r in (("gd", 0.1), ("scalar_adam", 0.2), ("adam", 0.5),
                                                              ("muon", 1e-6))]
    cells += [_cell("n128", "size", 128, m, r) for m, r in (("gd", 0.3), ("scalar_adam", 0.35), ("adam", 0.6),
                                                            ("muon", 2e-5), ("lion", 0.25), ("scaledgd", 0.9))]
    cells += [_cell("n64_r2", "rank", 64, m, r) for m, r in (("gd", 0.5), ("scalar_adam", 0.4), ("adam", 0.3))]
    table, splits = ladder.table11(cells)
    assert list(splits["split"]) == ["CLEAN", "OVERLAP", "OVERLAP"]  # n128: Lion below scalar-Adam; ScaledGD out
    rows = compare.rows(published.LADDER, opt_in_quantities.ladder(table, splits))
    assert list(rows["verdict"]) == [compare.EXACT] * 3  # the rank arm's reversed order is not read
    assert "n128 (n = 128): 0.0000" in rows["note"].iloc[0] and "canary: CLEAN" in rows["note"].iloc[2]
    table.loc[table["method"] == "muon", "rec"] = 1e-3
    again = compare.rows(published.LADDER, opt_in_quantities.ladder(table, splits))
    assert again["verdict"].iloc[0] == compare.DIFFERS


def test_ladder_values_need_their_target():
    merged = compare.complete(compare.rows([], {}))
    rows = merged[merged["source"] == "Table 11"]
    assert list(rows["verdict"]) == [compare.NOT_RUN] * 3 and "snakemake ladder" in rows["note"].iloc[0]
    assert pages.by_section(["table11.html", "dial_gpu.html", "table2.html", "dial.png"]) == {
        "Section 5": ["table2.html"], "Section 7": ["dial.png"], "App. D.9": ["table11.html", "dial_gpu.html"]}


# --- the opt-in target on the smoke configuration, on the CPU ------------------------------------------


@pytest.mark.workflow
def test_snakemake_ladder_on_the_smoke_configuration(tmp_path):
    """`snakemake ladder` trains only the ladder's stages and its dial arm's (device cpu), writes
    Table 11, its rows and the dial arm's table; the default target's DAG then reads the part."""
    proc = snakemake_smoke(tmp_path, "ladder", "--cores", "2")
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert not (tmp_path / "results" / "zoo").exists()  # nothing of the default target ran
    table = records.read_table(tmp_path / "results" / "ladder" / "table11.csv")
    assert list(table["arm"].unique()) == ["n8", "n8_mdof1p25"]
    assert list(table[table["arm"] == "n8"]["method"]) == ["gd", "scalar_adam", "muon", "adam", "scaledgd"]
    finite = table[table["lr"].notna()]
    assert set(finite["seeds"]) == {2} and finite["edge"].all()  # a two-point grid: lr* is always an edge
    assert table[table["arm"] == "n8"]["cosine_all_rec"].notna().any()
    assert table[table["arm"] == "n8_mdof1p25"]["cosine_all_rec"].isna().all()
    bundle = records.read_bundle(tmp_path / "results/runs/ladder/n8_mdof1p25/gd/selection.json")
    assert {r["config"]["m"] for r in bundle} == {49} and {r["config"]["dtype"] for r in bundle} == {"float64"}
    splits = records.read_table(tmp_path / "results" / "ladder" / "splits.csv")
    assert set(splits["split"]) <= {"CLEAN", "OVERLAP"}
    part = records.read_table(tmp_path / "results" / "ladder" / "comparison.csv")
    assert list(part["row"]) == ["Muon up to n = 256", "GD < scalar-Adam < Adam", "every size row"]
    assert set(part["verdict"]) <= {compare.EXACT, compare.DIFFERS} and part["note"].str.contains("n8").all()
    assert "ScaledGD" in (tmp_path / "results" / "tables" / "table11.html").read_text()
    bundle = records.read_bundle(tmp_path / "results/runs/dial_gpu/dial_gpu_n8/rms_p0/selection.json")
    assert {(r["experiment"], r["method"], r["seed"]) for r in bundle} == {
        ("dial_gpu_n8", "rms_p0", seed) for seed in (42, 123)}
    assert len(bundle) == 4 and {(r["config"]["loop"], r["config"]["dtype"]) for r in bundle} == {("gpu", "float64")}
    dial_table = records.read_table(tmp_path / "results/dial_gpu/table.csv")
    assert list(dial_table["p"]) == [1.0, 0.0] and set(dial_table["seeds"]) == {2}
    tables = {"table11": ["ladder/table11.csv", "ladder/splits.csv"], "dial_gpu": ["dial_gpu/table.csv"]}
    for name, inputs in tables.items():
        out = tmp_path / "cli" / f"{name}.tex"  # `gaugelab table NAME` renders the job's table byte for byte
        subprocess.run([sys.executable, "-m", "gaugelab.cli", "table", name,
                        *[str(tmp_path / "results" / path) for path in inputs], "--config", str(SMOKE), "-o", str(out)],
                       check=True, capture_output=True)
        for suffix in (".tex", ".html"):
            assert out.with_suffix(suffix).read_bytes() == (tmp_path / f"results/tables/{name}{suffix}").read_bytes()
    dag = snakemake_smoke(tmp_path, "--dag", "--cores", "1", "results/paper/comparison.csv")
    assert dag.returncode == 0 and "ladder_comparison" in dag.stdout
    again = snakemake_smoke(tmp_path, "ladder", "-n", "--cores", "1")
    assert "Nothing to be done" in again.stdout + again.stderr


def test_a_bundles_settings_are_what_its_runs_depend_on():
    """Adding an extension seed or a method to an arm leaves the selection bundles as they are."""
    arm = ladder.arms(config.load())["n64"]
    what, settings = ladder.bundle_identity("n64", arm, "gd", "selection")
    assert what == {"experiment": "ladder_n64", "method": "gd", "stage": "selection"}
    more = {**arm, "extension_seeds": [*arm["extension_seeds"], 9999], "grids": {**arm["grids"], "scaledgd": [1.0]}}
    assert ladder.bundle_identity("n64", more, "gd", "selection")[1] == settings
    assert ladder.bundle_identity("n64", more, "gd", "extension")[1] != ladder.bundle_identity("n64", arm, "gd",
                                                                                              "extension")[1]
    cosine = ladder.bundle_identity("n64", arm, "gd", "cosine_all")
    assert cosine[0]["experiment"] == "ladder_n64_cosine_all" and cosine[1]["decayed"] and not settings["decayed"]
