"""The attention-twin engine on the paper's CPU float32 model (spec: attention.md §3, §5, §7-§10):
construction and draw order, data, twins, the batched loop, records, and the published step-1
split on the paper's seeds."""

import json
import math

import pytest
import torch

from gaugelab import optim
from gaugelab.paper import compare, published
from gaugelab.optim import cards
from gaugelab.attention import harness, tasks, transformer, twins
from gaugelab.core import config, records, runtime
from gaugelab.paper import twin_summary as ts
from gaugelab.attention.configs import CPU_MOD47 as CFG
from gaugelab.attention.pairs import Pair, by_base, in_parts, parse_variant


@pytest.fixture(autouse=True)
def one_thread():
    previous = torch.get_num_threads()
    runtime.set_threads(1)
    yield
    runtime.set_threads(previous)


def settings(**over):
    return {**config.load()["twins"], **over}


def test_modular_addition_split():
    s = tasks.modular_addition(47)
    assert (len(s.x_train), len(s.x_val)) == (883, 1326)
    assert (s.x_train[:, 2] == 47).all() and ((s.x_train[:, 0] + s.x_train[:, 1]) % 47 == s.y_train).all()
    perm = torch.randperm(47 * 47, generator=torch.Generator().manual_seed(42))
    assert torch.equal(s.x_train[:, 0] * 47 + s.x_train[:, 1], perm[:883])  # permutation order, no shuffle
    big = tasks.modular_addition(97)
    assert (len(big.x_train), len(big.x_val)) == (3763, 5646)


def test_model_size_names_and_construction_order():
    params = transformer.initial_params(CFG, 42)
    assert transformer.count(params) == 104_896
    assert list(params)[:4] == ["pos", "E", "l0.g1", "l0.W_Q"] and list(params)[-2:] == ["g_f", "W_out"]
    assert list(params) == transformer.param_names(CFG)
    torch.manual_seed(42)  # §3.2: E normal, pos randn·0.02, per layer Q K V O W1 W2 uniform, head
    expected = {"E": torch.empty(48, 64).normal_(), "pos": torch.randn(1, 3, 64) * 0.02}
    for i in range(2):
        for name, shape in [("W_Q", (64, 64)), ("W_K", (64, 64)), ("W_V", (64, 64)), ("W_O", (64, 64)),
                            ("W_1", (256, 64)), ("W_2", (64, 256))]:
            expected[f"l{i}.{name}"] = torch.empty(shape).uniform_(-shape[1] ** -0.5, shape[1] ** -0.5)
    expected["W_out"] = torch.empty(47, 64).uniform_(-0.125, 0.125)
    for name, value in expected.items():
        assert torch.allclose(params[name], value, rtol=0, atol=1e-7), name  # kaiming's bound rounds
    assert all((params[n] == 1).all() for n in params if n.split(".")[-1] in ("g1", "g2", "g_f"))
    matrices = [n for n in params if transformer.is_matrix(n)]
    assert len(matrices) == 12 and "W_out" not in matrices and "E" not in matrices


@pytest.mark.portable
def test_module_forward_is_the_batched_forward():
    torch.manual_seed(0)
    model = transformer.Transformer(CFG)
    x = tasks.modular_addition(47).x_val[:50]
    batched = transformer.forward(transformer.stack([model.params()] * 2), x, CFG)
    assert torch.equal(model(x), batched[0]) and torch.equal(batched[0], batched[1])


def test_gauge_draws_are_qr_factors_in_head_order_without_sign_fix():
    a = harness.gauge_rotations(CFG, 777, torch.float32)
    g = torch.Generator().manual_seed(777)
    first = torch.linalg.qr(torch.randn(16, 16, generator=g), mode="reduced").Q
    second = torch.linalg.qr(torch.randn(16, 16, generator=g), mode="reduced").Q
    assert torch.equal(a[0, 0], first) and torch.equal(a[0, 1], second)
    assert a.shape == (2, 4, 16, 16) and a.dtype == torch.float32
    assert torch.allclose(a @ a.mT, torch.eye(16).expand_as(a), atol=1e-5)


def test_twin_transforms_touch_only_copy2_query_and_key():
    base = transformer.initial_params(CFG, 42)
    for pair in (Pair.of("adam", "gauge", 42, 777), Pair.of("adam", "noise", 42, sigma=1e-5)):
        both = transformer.stack([base, base])
        harness.make_twin(both, CFG, pair)
        for name, p in both.items():
            assert torch.equal(p[0], base[name])
            moved = name.split(".")[-1] in ("W_Q", "W_K")
            assert torch.equal(p[1], base[name]) != moved, (pair.twin, name)
    both = transformer.stack([base, base])
    harness.add_noise(both, CFG, 1e-5)
    g = torch.Generator().manual_seed(888)
    assert torch.equal(both["l0.W_Q"][1], base["l0.W_Q"] + 1e-5 * torch.randn(64, 64, generator=g))
    assert torch.equal(both["l0.W_K"][1], base["l0.W_K"] + 1e-5 * torch.randn(64, 64, generator=g))


@pytest.mark.parametrize("optimizer", cards.twin_optimizers())
def test_identity_twin_stays_bit_identical(optimizer):
    record = twins.train_pair(Pair.of(optimizer, "identity", 42), settings(steps=3, checkpoints=[0, 1, 2, 3]))
    assert record["identity_exact"] is True and record["status"] == "ok"
    assert [p[0] for p in record["curve"]] == [0, 1, 2, 3]
    assert all(p[1] == 0.0 and p[2] == 0.0 and p[3] == 0.0 for p in record["curve"])
    assert record["acc1"] == record["acc2"] and record["val_loss1"] == record["val_loss2"]


@pytest.mark.portable
@pytest.mark.parametrize("optimizer", ["adam", "muon"])
def test_a_pair_is_the_same_on_one_thread_or_two(optimizer, tmp_path):
    """The numerics contract's promise for the twin engine: a record, but for its timing and
    environment, does not depend on the thread count (each in a fresh process, as a job is)."""
    import subprocess
    import sys

    def record(threads):
        out = tmp_path / f"t{threads}.json"
        subprocess.run([sys.executable, "-m", "gaugelab.cli", "twins", "--optimizer", optimizer, "--twin", "gauge",
                        "--init-seed", "42", "--twin-seed", "777", "--steps", "3", "--threads", str(threads),
                        "-o", str(out)], check=True, capture_output=True)
        r = json.loads(out.read_text())
        return {k: v for k, v in r.items() if k not in ("wall_s", "env", "digest")}

    assert record(2) == record(1)


def test_identity_twin_that_drifts_fails_naming_the_pair(monkeypatch):
    real = harness.make_twin

    def broken(params, cfg, pair, run=1):
        real(params, cfg, pair, run)
        with torch.no_grad():
            params["l1.W_V"][run, 0, 0] += 1e-6  # a harness that is not deterministic

    monkeypatch.setattr(twins, "make_twin", broken)
    with pytest.raises(harness.DeterminismError, match=r"adam identity twin \(init 42, twin seed 0\).*step 0"):
        twins.train_pair(Pair.of("adam", "identity", 42), settings(steps=1))


@pytest.mark.portable
def test_a_copy_is_the_same_alone_or_in_a_batch():
    """Batching runs does not change rounding: copy 1 of a pair equals the same run alone, and
    copy 2 of a gauge pair equals itself batched with other runs."""
    s = settings()
    split = tasks.modular_addition(47)
    base = transformer.initial_params(CFG, 42)
    gauge = transformer.stack([base, base])
    harness.make_twin(gauge, CFG, Pair.of("muon", "gauge", 42, 777))
    runs = {"alone": transformer.stack([base]), "pair": transformer.stack([base, base]),
            "four": transformer.stack([base, {k: v[1] for k, v in gauge.items()}, base, base])}
    for params in runs.values():
        rule = twins.make_rule("muon", list(params), s)
        list(twins.train(params, CFG, rule, 0.02, split.x_train, split.y_train, 2))
    for name in runs["alone"]:
        assert torch.equal(runs["alone"][name][0], runs["pair"][name][0]), name
        assert torch.equal(runs["alone"][name][0], runs["four"][name][3]), name


def _bits(record):
    """A record but for its timing (wall_s, and the digest that covers it), as canonical JSON."""
    return json.dumps({k: v for k, v in record.items() if k not in ("wall_s", "digest")}, sort_keys=True)


@pytest.mark.portable
@pytest.mark.parametrize("optimizer", ["adam", "scalar_adam", "muon"])  # entry-wise, pooled, per matrix
def test_a_base_batch_gives_each_pair_its_own_record(optimizer):
    """train_base trains copy 1 once beside every twin that shares it (the twins job): each record
    is bit for bit the one its pair gets alone (a batch of 2), whatever the batch. A twin that goes
    non-finite leaves the batch where it would stop alone, and the others go on unchanged."""
    s = settings(steps=2, checkpoints=[0, 1, 2])
    pairs = [Pair.of(optimizer, "gauge", 42, 777), Pair.of(optimizer, "noise", 42, sigma=1e30),
             Pair.of(optimizer, "identity", 42)]
    batch = twins.train_base(pairs, s)
    assert [(r["status"], r["steps_done"]) for r in batch] == [("ok", 2), ("nonfinite", 0), ("ok", 2)]
    assert [_bits(r) for r in batch] == [_bits(twins.train_pair(p, s)) for p in pairs]
    other = Pair.of("sgd", "gauge", 123, 777)
    assert by_base([*pairs, other, pairs[0]]) == {(optimizer, 42): pairs, ("sgd", 123): [other]}
    with pytest.raises(ValueError, match="one optimizer and init seed"):
        twins.train_base([pairs[0], other], s)


def test_a_base_with_many_pairs_is_trained_in_parts():
    """in_parts: at most ``most`` pairs a job, near equal parts in listed order; a base that fits in
    one job keeps its plain name."""
    many = [Pair.of("adam", "gauge", 42, seed) for seed in (1, 2, 3, 4, 5)] + [Pair.of("adam", "identity", 42)]
    few = [Pair.of("sgd", "gauge", 123, 777)]
    jobs = in_parts(by_base(many + few), 4)
    assert jobs == {"adam_init42_part0": many[:3], "adam_init42_part1": many[3:], "sgd_init123": few}
    assert in_parts(by_base(many), 6) == {"adam_init42": many}
    assert [len(p) for p in in_parts(by_base(many[:5]), 2).values()] == [1, 2, 2]


@pytest.mark.portable
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_attention_products_are_blas_bit_for_bit(dtype):
    """Attention's short sums (over 3 positions, or 1 at the top layer's last position) are
    written out as ordered outer products; on this machine's MKL they equal the batched product
    bit for bit, gradients included, so the engine's records do not move."""
    g = torch.Generator().manual_seed(3)
    shapes = [((2, 5, 4, 3, 16), (2, 5, 4, 16, 3)), ((2, 5, 4, 3, 3), (2, 5, 4, 3, 16)),
              ((2, 5, 4, 1, 16), (2, 5, 4, 16, 3)), ((2, 5, 4, 1, 3), (2, 5, 4, 3, 16))]
    for sa, sb in shapes:
        a, b = (torch.randn(*s, generator=g, dtype=dtype) for s in (sa, sb))
        (a1, b1), (a2, b2) = ((x.clone().requires_grad_() for x in (a, b)) for _ in range(2))
        ours, blas = transformer._MatMul.apply(a1, b1), a2 @ b2
        assert torch.equal(ours, blas), (sa, sb)
        up = torch.randn(ours.shape, generator=g, dtype=dtype)
        assert all(torch.equal(x, y) for x, y in zip(torch.autograd.grad(ours, [a1, b1], up),
                                                     torch.autograd.grad(blas, [a2, b2], up))), (sa, sb)


def test_one_adam_step_splits_the_gauge_twin_as_published():
    """Section 6 / Table 3: Adam gauge twin (init 42, gauge 777) at steps 0 and 1."""
    record = twins.train_pair(Pair.of("adam", "gauge", 42, 777), settings(steps=1))
    for step in (0, 1):
        value = published.lookup("Table 3", "Adam gauge", f"drift_{step}")
        expected = compare.BOUND if value.is_bound else compare.EXACT  # step 0 is round-off: its order only
        assert compare.judge(value, record["curve"][step][1]) == expected, (step, record["curve"][step])


def test_record_roundtrip_and_validation(tmp_path):
    record = twins.train_pair(Pair.of("sgd", "noise", 42, sigma=1e-7), settings(steps=1))
    path = tmp_path / "pair.json"
    records.write_json(path, record)
    back = records.read_twin(path)
    assert back["curve"] == record["curve"] and back["sigma"] == 1e-7 and back["twin_seed"] == 888
    assert back["lr"] == 0.5 and back["lr_aux"] is None and back["env"]["threads"] == 1
    assert records.is_valid(path, records.TWIN_SCHEMA) and not records.is_valid(path)
    path.write_text(path.read_text()[:200])
    assert not records.is_valid(path, records.TWIN_SCHEMA)
    stored = records._stamped(record)
    with pytest.raises(records.RecordError, match="'curve' is a required property"):
        records.validate({k: v for k, v in stored.items() if k != "curve"})
    with pytest.raises(records.RecordError, match="field status: 'exploded' is not one of"):
        records.validate({**stored, "status": "exploded"})


def test_pairs_keys_and_variants():
    pair = Pair.of("adam", "noise", 42, sigma=1e-5)
    assert (pair.twin_seed, pair.variant) == (888, "noise1e-05")
    assert parse_variant(pair.variant) == ("noise", 1e-5)
    assert Pair.of("muon", "identity", 123).twin_seed == 0
    for bad in [("adamw", "gauge", 42, 1), ("adam", "rotated", 42, 1)]:
        with pytest.raises(ValueError, match="unknown"):
            Pair.of(*bad)
    with pytest.raises(ValueError, match="needs its twin seed"):
        Pair.of("adam", "gauge", 42)
    sets = ts.sets_of(config.load()["twins"])
    assert [len(sets[k]) for k in ("s6_main", "s6_noise", "d5")] == [5, 4, 16]
    assert len(ts.unique_pairs(sets)) == 19  # pairs shared by S6 and D5 run once


def test_muon_hybrid_is_muon_on_matrices_and_adam_on_the_rest():
    g = [torch.randn(1, 4, 3), torch.randn(1, 5), torch.randn(1, 3, 3)]
    hybrid = optim.muon_hybrid([True, False, True], lr_aux=1e-3)
    state = hybrid.init(g)
    for t in (1, 2):
        deltas, state = hybrid.update(g, state, 0.02, t)
    mu, ad = optim.muon(), optim.adam()
    s_mu, s_ad = mu.init([g[0], g[2]]), ad.init([g[1]])
    for t in (1, 2):
        d_mu, s_mu = mu.update([g[0], g[2]], s_mu, 0.02, t)
        d_ad, s_ad = ad.update([g[1]], s_ad, 1e-3, t)
    assert torch.equal(deltas[0], d_mu[0]) and torch.equal(deltas[2], d_mu[1]) and torch.equal(deltas[1], d_ad[0])


def test_verdict_kinds():
    v = published.Value("x", "y", "z", 2.6e-7, 1.0, "2.6e-7", "decades")
    assert compare.judge(v, 2.5e-7) == compare.BOUND and compare.judge(v, 2.5e-9) == compare.DIFFERS
    low = published.Value("x", "y", "z", 4, 4.0, "4", "at_least")
    assert compare.judge(low, math.inf) == compare.BOUND and compare.judge(low, 3.9) == compare.DIFFERS
    assert compare.judge(published.Value("x", "y", "z", 0.05, 0.05, "", "at_most"), math.nan) == compare.DIFFERS


@pytest.mark.slow
def test_d5_step1_range_reproduces():
    """Appendix D.5: the six Adam gauge pairs' step-1 drift range (one step each)."""
    s = settings(steps=1)
    pairs = [p for p in ts.sets_of(s)["d5"] if p.optimizer == "adam" and p.twin == "gauge"]
    values = [twins.train_pair(p, s)["curve"][1][1] for p in pairs]
    for quantity, value in (("step1_min", min(values)), ("step1_max", max(values))):
        assert compare.judge(published.lookup("Appendix D.5", "Adam gauge", quantity), value) == compare.EXACT, values
