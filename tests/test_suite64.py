"""The float64 twin suite of Table 9 (attention.md §2, §4, §5, §7, §9.6, §12.3): the model variant,
its initialisation, the step-1 subset against the published step-1 ranges, and the table."""

import dataclasses
import json
import math

import pytest
import torch
import torch.nn.functional as F

from gaugelab import cli
from gaugelab.paper import published, table9
from gaugelab.attention import float64, float64_step1, float64_train, float64_local
from gaugelab.attention import harness, transformer
from gaugelab.core import records, runtime
from gaugelab.core.config import load
from test_corpus import SHARED, needs_corpus
from gaugelab.attention import configs
from gaugelab.attention.pairs import Pair, by_base

SETTINGS = load()["table9"]
PARAMS = {"f64-mod47-L2d64h4": 104_896, "f64-mod97-L4d128h8": 812_928, "f64-mod97-L6d256h8": 4_772_608,
          "f64-text-L6d256h8": 4_787_968}  # attention.md §2: implementation checks, not results


@pytest.fixture(autouse=True)
def one_thread():
    threads = torch.get_num_threads()
    runtime.set_threads(1)
    torch.use_deterministic_algorithms(True)
    yield
    runtime.set_threads(threads)


def pairs(*specs):
    return [Pair.of(*spec) for spec in specs]


def subset(name, *specs):
    cfg = configs.config(name)
    task = float64.make_task(cfg, SHARED)
    return {(r["optimizer"], r["twin"], r["sigma"]): r
            for r in float64_step1.step1_subset(cfg, task, pairs(*specs), SETTINGS, log=lambda line: None)}


def step1(rec):
    return table9.drift_at(rec, 1)


def assert_in_published_range(short, value):
    lo, hi, tol_lo, tol_hi = table9.published_range(short)
    assert lo - tol_lo <= value <= hi + tol_hi, f"{short}: Adam gauge step-1 drift {value:.3e} outside {lo:g}-{hi:g}"


# --- the model variant --------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(PARAMS))
def test_parameter_counts_and_grouped_order(name):
    cfg = configs.config(name)
    params = float64.initial_params(cfg, 42)
    assert list(params) == float64.param_names(cfg)
    assert transformer.count(params) == PARAMS[name]
    assert all(p.dtype == torch.float64 and p.shape[0] == 1 for p in params.values())


def test_initialisation_is_a_fresh_generator_draw_in_float32_grouped_by_type():
    cfg = configs.config("f64-mod47-L2d64h4")
    a, b = float64.initial_params(cfg, 42), float64.initial_params(cfg, 42)
    assert all(torch.equal(a[k], b[k]) for k in a)  # base, copy 1 and copy 2 are identical draws
    gen = torch.Generator().manual_seed(42)
    E = torch.randn(cfg.vocab_in, cfg.d, generator=gen)
    torch.randn(1, cfg.n_ctx, cfg.d, generator=gen)
    wq0 = (torch.rand(cfg.d, cfg.d, generator=gen) * 2 - 1) / cfg.d**0.5
    wq1 = (torch.rand(cfg.d, cfg.d, generator=gen) * 2 - 1) / cfg.d**0.5  # W_Q of layer 1 before any W_K
    assert torch.equal(a["E"][0], E.double()) and torch.equal(a["l0.W_Q"][0], wq0.double())
    assert torch.equal(a["l1.W_Q"][0], wq1.double())
    assert all(torch.equal(p.float().double(), p) for p in a.values())  # float32 values, cast
    cpu = transformer.initial_params(configs.CPU_MOD47, 42)  # same first draws, then another order
    assert torch.equal(cpu["l0.W_Q"].double(), a["l0.W_Q"][0])  # (pitfall 8: the CPU path is not reused)
    assert not torch.equal(cpu["l0.W_K"].double(), a["l0.W_K"][0])


def test_written_out_cross_entropy_and_one_hot_embedding_match_the_library():
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 5, 7, 11, generator=gen, dtype=torch.float64)
    labels = torch.randint(0, 11, (5, 7), generator=gen)
    ref = torch.stack([F.cross_entropy(z.reshape(-1, 11), labels.reshape(-1)) for z in logits])
    assert torch.allclose(transformer.manual_loss(logits, labels), ref, rtol=0, atol=1e-14)
    cfg = configs.config("f64-mod47-L2d64h4")
    params = float64.initial_params(cfg, 42)
    tokens = torch.randint(0, cfg.vocab_in, (9, 3), generator=gen)
    lookup = transformer.forward(params, tokens, dataclasses.replace(cfg, embed="index"))
    assert torch.allclose(transformer.forward(params, tokens, cfg), lookup, rtol=0, atol=1e-13)


def test_text_model_is_causal_and_reads_out_every_position():
    cfg = configs.ModelConfig("tiny-text", 65, 65, 2, 16, 2, 8, readout="all", embed="onehot", causal=True)
    gen = torch.Generator().manual_seed(3)
    params = {k: v[None].double() for k, v in transformer.initial_params(cfg, 1).items()}
    x = torch.randint(0, 65, (3, 8), generator=gen)
    y = x.clone()
    y[:, 5] = (y[:, 5] + 1) % 65
    zx, zy = transformer.forward(params, x, cfg), transformer.forward(params, y, cfg)
    assert zx.shape == (1, 3, 8, 65)
    assert torch.equal(zx[:, :, :5], zy[:, :, :5]) and not torch.equal(zx[:, :, 5:], zy[:, :, 5:])


# --- the step-1 subset against Table 9 ------------------------------------------------------------


@pytest.fixture(scope="module")
def small():
    """2L/d64: Adam's gauge, identity and largest-σ noise twins, and the three equivariant gauge twins."""
    with torch.random.fork_rng():
        runtime.set_threads(1)
        return subset("f64-mod47-L2d64h4", ("adam", "gauge", 42, 777), ("adam", "identity", 42),
                      ("adam", "noise", 42, None, 1e-5), ("sgd", "gauge", 42, 777),
                      ("scalar_adam", "gauge", 42, 777), ("muon", "gauge", 42, 777))


def equivariant_bound():
    return published.lookup("Table 9", "mod-97 equivariant gauge", "step1_max").tolerance


def test_small_config_step1_matches_table9(small):
    assert_in_published_range("2L/d64", step1(small[("adam", "gauge", 0.0)]))
    identity = small[("adam", "identity", 0.0)]
    assert [p[1:] for p in identity["curve"]] == [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]  # exactly 0, with ==
    for opt in table9.EQUIVARIANT:
        assert 0 < step1(small[(opt, "gauge", 0.0)]) <= equivariant_bound(), opt
    noise = step1(small[("adam", "noise", 1e-5)])
    assert step1(small[("adam", "gauge", 0.0)]) / noise > 10  # the structural split dwarfs the noise twin


def test_step0_is_measured_once_per_init_seed_and_read_back_by_each_optimizers_subset(small, tmp_path):
    """Step 0 of a twin does not depend on the optimizer: one record per init seed holds each twin
    once (float64_step1.step0), and the subsets of every optimizer that read it give the records
    they give measuring step 0 themselves; a record of another init seed, or one lacking a twin,
    is refused by name."""
    model = "f64-mod47-L2d64h4"
    cfg, task = configs.config(model), float64.make_task(configs.config(model))
    both = pairs(("adam", "gauge", 42, 777), ("sgd", "gauge", 42, 777), ("adam", "identity", 42),
                 ("adam", "noise", 42, None, 1e-5))
    rec = float64_step1.step0(cfg, task, 42, both)
    assert [(p["twin"], p["twin_seed"], p["sigma"]) for p in rec["points"]] == [
        ("gauge", 777, 0.0), ("identity", 0, 0.0), ("noise", 888, 1e-5)]  # the gauge twin once, for both
    path = tmp_path / "init42.json"
    records.write_json(path, rec)
    read = records.read_twin_step0(path, float64_step1.step0_provenance(model, 42, "float64"))
    for optimizer in ("adam", "sgd"):
        mine = [p for p in both if p.optimizer == optimizer]
        untimed = lambda recs: [{k: v for k, v in r.items() if k != "wall_s"} for r in recs]
        assert untimed(float64_step1.step1_subset(cfg, task, mine, SETTINGS, step0_records=[read], log=print)) \
            == untimed(float64_step1.step1_subset(cfg, task, mine, SETTINGS, log=print))
    assert [p[1:] for p in small[("adam", "identity", 0.0)]["curve"]][0] == read["points"][1]["point"][1:]
    with pytest.raises(records.RecordError, match=r"init42\.json: another run than its path names"):
        records.read_twin_step0(path, float64_step1.step0_provenance(model, 43, "float64"))
    with pytest.raises(records.RecordError, match="no step-0 record holds adam gauge twin .init 42, twin seed 999"):
        float64_step1.step1_subset(cfg, task, pairs(("adam", "gauge", 42, 999)), SETTINGS, step0_records=[read])


@pytest.mark.portable
def test_a_full_loop_reproduces_the_subset_and_keeps_the_identity_exact(small):
    cfg = configs.config("f64-mod47-L2d64h4")
    task = float64.make_task(cfg)
    rec = float64_train.train_pair(Pair.of("adam", "gauge", 42, 777), cfg, task, SETTINGS, steps=2)
    assert rec["curve"][:2] == small[("adam", "gauge", 0.0)]["curve"]  # one code path, bit for bit
    ident = float64_train.train_pair(Pair.of("adam", "identity", 42), cfg, task, SETTINGS, steps=3)
    assert all(p[1] == 0.0 and p[2] == 0.0 for p in ident["curve"]) and ident["identity_exact"]
    table = table9.rows(list(small.values()), [rec, ident])  # full columns where full runs exist
    adam = table[table["optimizer"] == "adam"].set_index("twin")
    assert adam.loc["gauge", "final"] == [rec["curve"][-1][1]] and adam.loc["noise", "full_pairs"] == 0
    assert "0" == table9.cell(adam.loc["identity", "final"])


def test_table9_rows_ratio_and_comparison_come_from_the_records(small):
    recs = list(small.values())
    table = table9.rows(recs, [])
    assert list(table["optimizer"]) == ["adam", "adam", "adam", "scalar_adam", "muon", "sgd"]
    assert list(table["label"])[:3] == ["gauge", "noise@[1e-05]", "identity"]
    ratio = table9.ratio_t9(recs, "f64-mod47-L2d64h4")
    assert ratio == step1(small[("adam", "gauge", 0.0)]) / step1(small[("adam", "noise", 1e-5)])
    tex, html = table9.latex(table, recs), table9.html(table, recs)
    assert "attention mod p47 L2 d64 h4 s1500" in tex and f"{ratio:.0f}$\\times$" in tex
    assert f"{ratio:.0f}×" in html and "no full-length runs" in html
    comparison = table9.comparison(recs, [])
    got = {(r.row, r.quantity): r for r in comparison.itertuples()}
    assert got[("identity twins", "max_drift")].verdict == "exact"
    assert ("2L/d64", "ratio_t9") not in got  # one Adam gauge pair: the published ranges need six


def _untimed(rec):
    return {k: v for k, v in rec.items() if k != "wall_s"}


def _same(a, b):
    """Records equal field by field, NaN equal to NaN (a non-finite pair's metrics)."""
    return json.dumps(_untimed(a), sort_keys=True) == json.dumps(_untimed(b), sort_keys=True)


@pytest.mark.portable
@pytest.mark.parametrize("optimizer", ["adam", "scalar_adam", "muon"])  # entry-wise, pooled, per matrix
def test_the_pairs_of_one_copy_1_batched_are_each_pair_alone(optimizer):
    """float64_train.train_batch (copy 1 once beside every twin that shares it, one batched
    program): each record bit for bit the pair's train_pair record on the CPU, a twin that goes
    non-finite (the batch then goes on copy by copy) included."""
    cfg = configs.config("f64-mod47-L2d64h4")
    task = float64.make_task(cfg)
    chosen = [Pair.of(optimizer, "gauge", 42, 777), Pair.of(optimizer, "identity", 42),
              Pair.of(optimizer, "noise", 42, sigma=1e-7)]
    batch = float64_train.train_batch(chosen, cfg, task, SETTINGS, steps=2)
    assert all(_same(b, float64_train.train_pair(p, cfg, task, SETTINGS, steps=2)) for b, p in zip(batch, chosen))
    if optimizer == "adam":  # a twin whose loss is not finite from the first step
        blown = [chosen[0], Pair.of(optimizer, "noise", 42, sigma=1e300), chosen[2]]
        batch = float64_train.train_batch(blown, cfg, task, SETTINGS, steps=2)
        assert [r["status"] for r in batch] == ["ok", "nonfinite", "ok"]
        assert all(_same(b, float64_train.train_pair(p, cfg, task, SETTINGS, steps=2)) for b, p in zip(batch, blown))


@pytest.mark.portable
def test_a_configurations_pairs_in_one_program_are_each_pair_alone():
    """Several copy 1s in one program (a GPU job's batch: every optimizer, both init seeds), each
    block of runs updated by its own rule: every record bit for bit its pair's alone on the CPU, in
    the order given, whatever the order of the pairs; a twin that goes non-finite in one block
    sends every block on copy by copy, and still changes no other record."""
    cfg = configs.config("f64-mod47-L2d64h4")
    task = float64.make_task(cfg)
    chosen = [Pair.of("sgd", "gauge", 42, 777), Pair.of("adam", "gauge", 43, 888),
              Pair.of("muon", "noise", 42, sigma=1e-7), Pair.of("adam", "identity", 43),
              Pair.of("scalar_adam", "gauge", 42, 777), Pair.of("adam", "gauge", 42, 777)]
    alone = {p: float64_train.train_pair(p, cfg, task, SETTINGS, steps=2) for p in chosen}
    batch = float64_train.train_batch(chosen, cfg, task, SETTINGS, steps=2)
    assert [r["optimizer"] for r in batch] == [p.optimizer for p in chosen]
    assert all(_same(b, alone[p]) for b, p in zip(batch, chosen))
    blown = Pair.of("adam", "noise", 43, sigma=1e300)
    alone[blown] = float64_train.train_pair(blown, cfg, task, SETTINGS, steps=2)
    batch = float64_train.train_batch([blown, *chosen], cfg, task, SETTINGS, steps=2)
    assert [r["status"] for r in batch] == ["nonfinite"] + ["ok"] * len(chosen)
    assert all(_same(b, alone[p]) for b, p in zip(batch, [blown, *chosen]))
    with pytest.raises(ValueError, match="distinct pairs"):
        float64_train.train_batch([chosen[0], chosen[0]], cfg, task, SETTINGS, steps=1)


def test_a_gpu_trains_a_configuration_in_one_program_and_the_cpu_per_copy_1():
    """A configuration's 18 pairs are 23 copies: one program on a GPU by default, programs of whole
    copy 1s within max_copies on a smaller one, one program per copy 1 on the CPU."""
    chosen = Pair.listed(SETTINGS["pairs"])
    bases = list(by_base(chosen).values())  # Adam 42 (6 twins), Adam 43, scalar-Adam, Muon, SGD (3 each)
    assert SETTINGS["max_copies"] == 23 and float64_train.programs(chosen, "cuda") == [sum(bases, [])]
    assert float64_train.programs(chosen, "cpu", max_copies=23) == bases
    assert float64_train.programs(chosen, "cuda", max_copies=8) == [bases[0], bases[1] + bases[2], bases[3] + bases[4]]
    assert float64_train.programs(chosen, "cuda", max_copies=2) == bases  # a copy 1 is never split from its twins


def test_an_identity_twin_that_moves_fails_the_job():
    cfg = configs.config("f64-mod47-L2d64h4")
    base = float64.initial_params(cfg, 42)
    moved = float64.clone(base)
    moved["l0.W_V"][0, 0, 0] += 1e-12
    with pytest.raises(harness.DeterminismError, match="adam identity twin"):
        harness.check_identity(Pair.of("adam", "identity", 42), [0, 0.0, 0.0, 0.0], base.values(),
                               moved.values())


@pytest.mark.portable
def test_the_table9_command_writes_the_workflows_records_from_worker_processes(tmp_path, small, capsys):
    """`gaugelab table9` (a GPU box without Snakemake): records where table9_full and table9_step1
    put them, bit-identical to the same pair trained in this process; existing records are kept."""
    model = "f64-mod47-L2d64h4"
    argv = ["table9", "--model", model, "--optimizer", "adam", "--twin", "identity", "--twin", "noise",
            "--device", "cpu", "--root", str(tmp_path)]
    assert cli.main([*argv, "--steps", "2"]) == 0
    chosen = [p for p in Pair.listed(SETTINGS["pairs"]) if p.optimizer == "adam" and p.twin != "gauge"]
    written = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.json"))
    # a run shorter than the configuration's goes where no workflow rule reads it
    assert len(chosen) == 3 and written == sorted(float64_local.short_run_path(model, p, 2) for p in chosen)
    noise = next(p for p in chosen if p.sigma == 1e-5)
    rec = records.read_twin(tmp_path / float64_local.short_run_path(model, noise, 2))
    cfg = configs.config(model)
    alone = float64_train.train_pair(noise, cfg, float64.make_task(cfg), SETTINGS, steps=2)
    assert rec["curve"] == alone["curve"] and rec["curve"][:2] == small[("adam", "noise", 1e-5)]["curve"]
    assert cli.main([*argv, "--step1"]) == 0
    bundle = float64.read_bundle(tmp_path / float64.step1_path(model))
    assert [r["curve"] for r in bundle if r["sigma"] == 1e-5] == [small[("adam", "noise", 1e-5)]["curve"]]
    capsys.readouterr()
    assert cli.main([*argv, "--steps", "2"]) == 0 and "0 job(s)" in capsys.readouterr().out  # kept
    with pytest.raises(SystemExit, match="needs --corpus"):
        cli.main(["table9", "--model", configs.TEXT, "--root", str(tmp_path)])


# --- the larger configurations (slow: one Adam gauge pair each, tens of seconds on one core) -------


@pytest.mark.slow
@pytest.mark.parametrize("name", ["f64-mod97-L4d128h8", pytest.param("f64-mod97-L6d256h8", marks=pytest.mark.full)])
def test_mod97_adam_gauge_step1_in_published_range(name):
    recs = subset(name, ("adam", "gauge", 42, 777), ("sgd", "gauge", 42, 777))
    assert_in_published_range(configs.SHORT[name], step1(recs[("adam", "gauge", 0.0)]))
    assert 0 < step1(recs[("sgd", "gauge", 0.0)]) <= equivariant_bound()


@pytest.mark.slow
@pytest.mark.full
@needs_corpus
def test_char_lm_adam_gauge_step1_in_published_range():
    recs = subset("f64-text-L6d256h8", ("adam", "gauge", 42, 777), ("adam", "identity", 42))
    assert_in_published_range("char-LM", step1(recs[("adam", "gauge", 0.0)]))
    assert recs[("adam", "identity", 0.0)]["curve"][1][1:] == [0.0, 0.0, 0.0]
    assert not math.isnan(recs[("adam", "gauge", 0.0)]["last_batch_loss1"])


# --- the workflow: the step-1 subset in the default target, the full runs behind `gpu` ------------


@pytest.mark.workflow
def test_default_target_runs_the_step1_subset_and_gpu_target_the_full_runs(tmp_path):
    from test_workflow import dry_run_counts

    default = dry_run_counts(tmp_path)
    # the step-1 subset: one job per configuration and copy 1 (Adam at init 42 and 43, scalar-Adam,
    # Muon, SGD), one bundle per configuration; step 0 one job per configuration and init seed
    assert default["table9_step1"] == 4 * 5 and default["table9_step1_bundle"] == 4
    assert default["table9_step0"] == 4 * 2
    assert default["table9"] == 1 and "table9_full" not in default
    gpu = dry_run_counts(tmp_path / "gpu", "gpu")
    assert gpu["table9_full"] == 4 and "table9_step1" not in gpu  # one job per configuration
    assert len(Pair.listed(SETTINGS["pairs"])) == 18


@pytest.mark.workflow
def test_the_step1_bundle_from_its_copy_1_parts_is_the_whole_subsets(tmp_path):
    """The workflow's step-1 jobs, one per copy 1, make the bundle that one process over every pair
    of the configuration makes (float64_step1.step1_subset), each record alike but for its timing."""
    import subprocess

    from test_workflow import SMOKE, SNAKEMAKE

    model = "f64-mod47-L2d64h4"
    t9 = load(SMOKE)["table9"]
    settings = float64.job_settings(t9)  # the rules' T9_SETTINGS
    subprocess.run([*SNAKEMAKE, float64.step1_path(model), "--directory", str(tmp_path), "--cores", "2",
                    "--configfile", str(SMOKE)], check=True, capture_output=True)
    parts = sorted(p.name for p in (tmp_path / "results/runs/table9_step1" / model).iterdir())
    assert parts == ["adam_init42.json", "adam_init43.json", "muon_init42.json", "scalar_adam_init42.json",
                     "sgd_init42.json"]
    steps0 = sorted(p.name for p in (tmp_path / "results/runs/table9_step0" / model).iterdir())
    assert steps0 == ["init42.json", "init43.json"]  # step 0 once per init seed, read by each part
    cfg, pairs = configs.config(model), Pair.listed(t9["pairs"])
    runtime.set_threads(1)  # as the jobs run (threads: 1): native kernels may round by thread count
    whole = float64_step1.step1_subset(cfg, float64.make_task(cfg), pairs, settings, log=lambda line: None)
    float64.write_bundle(tmp_path / "whole.json", whole, float64.step1_provenance(model, settings, pairs))
    untimed = lambda r: {k: v for k, v in r.items() if k not in ("wall_s", "digest")}
    made, alone = (records.load(path) for path in (tmp_path / float64.step1_path(model), tmp_path / "whole.json"))
    assert made["provenance"] == alone["provenance"]
    assert [untimed(r) for r in made["records"]] == [untimed(r) for r in alone["records"]]
    # the released summary's step-1 values of this configuration (attention.md §12.5), one row each
    rows = table9.comparison(made["records"], [])
    logged = rows[rows["where"] == published.T9_LOG]
    expected = [v for v in published.TABLE9_LOGGED if v.row.startswith("2L/d64 ") and v.target == "default"]
    assert sorted(logged["quantity"] + " " + logged["row"]) == sorted(f"{v.quantity} {v.row}" for v in expected)
    assert len(expected) == 9 and logged["reproduced"].notna().all()

