"""The sensing testbed, loss, metrics and run loop (spec: sensing.md §1, §2.1, §5)."""

import math

import pytest
import torch

from gaugelab import optim
from gaugelab.core import runtime
from gaugelab.optim import cards
from gaugelab.sensing import loop, testbed


def small(seed=0, n=6, rank=2, per_dof=2.0):
    m = testbed.measurements(n, rank, per_dof)
    return testbed.make_instance(n, rank, m, seed), testbed.init_factors(n, n, 0.3, seed)


def test_sizes_and_draw_order():
    assert testbed.measurements(40, 3, 2.0) == 462
    inst = testbed.make_instance(40, 3, 462, 42)
    g = torch.Generator().manual_seed(42)
    u = torch.randn(40, 3, generator=g) / math.sqrt(3)
    v = torch.randn(40, 3, generator=g) / math.sqrt(3)
    a = torch.randn(462, 1600, generator=g)
    assert torch.equal(inst.X, u @ v.T) and torch.equal(inst.A, a)
    assert torch.equal(inst.y, a @ (u @ v.T).reshape(-1))


def test_loss_is_a_mean_without_half_and_matches_the_closed_form_gradient():
    inst, (u, v) = small()
    u, v = u.double()[None].requires_grad_(), v.double()[None].requires_grad_()
    a, y = inst.A.double(), inst.y.double()
    inst64 = testbed.Instance(A=a, y=y, X=inst.X.double())
    value = testbed.loss(inst64, u, v)
    residual = a @ (u[0] @ v[0].T).reshape(-1) - y
    assert torch.allclose(value[0], (residual**2).sum() / len(y))
    gu, gv = torch.autograd.grad(value.sum(), [u, v])
    e = (2 / len(y)) * (a.T @ residual).reshape(6, 6)
    assert torch.allclose(gu[0], e @ v[0].detach()) and torch.allclose(gv[0], e.T @ u[0].detach())


@pytest.mark.portable
@pytest.mark.parametrize("shape", [(40, 3), (60, 5), (8, 2)])
@pytest.mark.parametrize("threads", [1, 2])
def test_padded_blocks_give_every_row_the_bits_it_has_alone(threads, shape):
    """What testbed.padded_rows relies on, on the testbeds' product shapes (both directions),
    under the numerics contract: in a block padded by the rule, each run's row equals that row
    alone in a block of GEMM_MIN_ROWS on one thread, whatever the count; so records do not depend
    on the batch or the threads, on any x86-64 CPU."""
    n, rank = shape
    a = testbed.make_instance(n, rank, testbed.measurements(n, rank, 2.0), 42).A
    g = torch.Generator().manual_seed(8)
    before = torch.get_num_threads()
    try:
        for product in (a.mT[None], a[None]):
            x = torch.randn(40, product.shape[1], generator=g) * 1e-2
            runtime.set_threads(1)
            pad = x.new_zeros(testbed.GEMM_MIN_ROWS - 1, x.shape[1])
            alone = torch.cat([torch.bmm(torch.cat([x[i : i + 1], pad])[None], product)[0, :1] for i in range(len(x))])
            runtime.set_threads(threads)
            for count in range(1, len(x) + 1):
                rows = testbed.padded_rows(count)
                block = torch.cat([x[:count], x.new_zeros(rows - count, x.shape[1])])
                assert torch.equal(torch.bmm(block[None], product)[0, :count], alone[:count]), (threads, count)
    finally:
        runtime.set_threads(before)


@pytest.mark.portable
@pytest.mark.parametrize("separate", [False, True])
@pytest.mark.parametrize("which", [[0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2], [0, 1, 2, 0, 1], [2, 2, 0]])
def test_written_out_gradients_are_autograds_bit_for_bit(which, separate):
    """Dense, padded and per-instance layouts: the engine's gradient is the one autograd computes."""
    insts = testbed.stack([small(seed)[0] for seed in range(3)])
    layout = testbed.Layout.of(torch.tensor(which), 3, separate=separate)
    g = torch.Generator().manual_seed(5)
    u, v = (torch.randn(len(which), 6, 6, generator=g) for _ in range(2))
    uu, vv = u.clone().requires_grad_(), v.clone().requires_grad_()
    losses = testbed.loss(insts, uu, vv, layout)
    expected = torch.autograd.grad(losses.sum(), [uu, vv])
    got_loss, *got = testbed.loss_and_gradients(insts, u, v, layout)
    assert torch.equal(got_loss, losses.detach())
    assert all(torch.equal(a, b) for a, b in zip(got, expected))


@pytest.mark.portable
@pytest.mark.parametrize("name", [n for n in optim.REGISTRY if optim.make(n).stackable])
def test_stackable_rules_give_the_same_bits_on_stacked_parameters(name):
    """What lets the engine pass U and V as one tensor: a stackable rule's increments on
    [stack(U, V)] are its increments on [U, V], over a few steps of state."""
    g = torch.Generator().manual_seed(6)
    rule, lr = optim.make(name), torch.tensor([1e-2, 3e-2], dtype=torch.float64)
    p = torch.randn(2, 2, 6, 6, generator=g)
    state_apart, state_stacked = rule.init([p[:, 0], p[:, 1]]), rule.init([p])
    for t in range(1, 4):
        grad = torch.randn(2, 2, 6, 6, generator=g)
        apart, state_apart = rule.update([grad[:, 0], grad[:, 1].mT.contiguous().mT], state_apart, lr, t)
        (stacked,), state_stacked = rule.update([grad], state_stacked, lr, t)
        assert torch.equal(torch.stack(apart, 1), stacked), (name, t)


def test_metrics_of_the_truth():
    inst = testbed.make_instance(40, 3, 462, 42)
    u, s, vh = torch.linalg.svd(inst.X)
    root = s[:3].sqrt()
    uu, vv = (u[:, :3] * root)[None], (vh[:3].T * root)[None]
    got = testbed.metrics(inst.X, uu, vv)
    assert got["rec"].item() < 1e-6
    assert 2.5 < got["erank"].item() < 3.0  # singular values, not their squares: unequal ones read below 3
    assert abs(got["nuc"].item() - s.sum().item()) < 1e-4
    assert got["bal"].item() < 1e-4  # a balanced factorisation


def test_cosine_reaches_zero_at_the_budget():
    assert loop.cosine_factor(100, 100) == 0.0
    assert loop.cosine_factor(50, 100) == 0.5 or abs(loop.cosine_factor(50, 100) - 0.5) < 1e-15


def test_divergence_is_a_status_with_nan_metrics():
    inst, (u, v) = small()
    res, = loop.train(inst, optim.make("gd"), [10.0], u, v, budget=1000, decayed=False)
    assert res.status == "diverged" and res.steps < 1000
    assert all(math.isnan(x) for x in (res.rec, res.erank, res.nuc, res.bal, res.train))


def test_early_stop_only_at_multiples_of_check_every():
    inst, (u, v) = small()
    res, = loop.train(inst, optim.make("adam"), [0.01], u, v, budget=5000, decayed=False,
                         tol=1e-3, check_every=300)
    assert res.status == "interpolated" and res.steps % 300 == 0 and res.train < 1e-3
    assert res.curve_steps[0] == 1 and res.curve_steps[-1] == res.steps


def test_budget_status_and_steps():
    inst, (u, v) = small()
    res, = loop.train(inst, optim.make("gd"), [1e-4], u, v, budget=50, decayed=True)
    assert res.status == "budget" and res.steps == 50


DIAL = {"adam_p 0.5 rms": lambda: optim.adam_p(0.5, "rms"), "adam_p 0.25 geo": lambda: optim.adam_p(0.25, "geo")}


@pytest.mark.portable
@pytest.mark.parametrize("name", cards.zoo() + list(DIAL))
def test_batched_runs_are_bit_identical_to_one_at_a_time(name):
    """Runs that leave the batch at different steps (diverged, interpolated, budget, chaotic)
    get exactly the record each gets alone: the engine pads its GEMMs and computes metrics per run."""
    inst, (u, v) = small(seed=3)
    lrs = [0.003, 0.03, 0.3, 10.0]
    make = DIAL.get(name, lambda: optim.make(name))
    together = loop.train(inst, make(), lrs, u, v, budget=600, decayed=True, tol=1e-4)
    for lr, joint in zip(lrs, together):
        alone, = loop.train(inst, make(), [lr], u, v, budget=600, decayed=True, tol=1e-4)
        assert (joint.status, joint.steps, joint.curve_loss) == (alone.status, alone.steps, alone.curve_loss)
        for key in ("rec", "erank", "nuc", "bal", "train"):
            a, b = getattr(joint, key), getattr(alone, key)
            assert a == b or (math.isnan(a) and math.isnan(b)), (lr, key, a, b)


def test_perturbation_scales_the_initial_u():
    inst, (u, v) = small()
    base, moved = loop.train(inst, optim.make("gd"), [0.01, 0.01], u, v, budget=1, decayed=False,
                             perturbations=[0.0, 1e-3])
    assert moved.curve_loss[0] != base.curve_loss[0]


@pytest.mark.portable
def test_one_batch_of_several_methods_and_seeds_matches_separate_batches():
    from gaugelab.sensing import runner

    exp = {"n": 6, "rank": 2, "width": 6, "measurements_per_dof": 2.0, "init": 0.3, "budget": 400,
           "tol": 1e-4, "check_every": 200, "decayed": ["muon"]}
    cells = [(method, seed, lr, delta) for method in ("adam", "muon", "shampoo") for seed in (42, 123)
             for lr in (0.003, 0.03, 3.0) for delta in (0.0, 1e-3)]
    joint = runner.run_batch("t", exp, cells, threads=1)
    for method in ("adam", "muon", "shampoo"):
        for seed in (42, 123):
            part = [c for c in cells if c[:2] == (method, seed)]
            alone = runner.run_batch("t", exp, part, threads=1)
            assert [r for r, c in zip(joint, cells) if c[:2] == (method, seed)] == alone


def test_dial_loop_checks_the_post_update_loss():
    inst, (u, v) = small()
    canonical, = loop.train(inst, optim.make("adam"), [0.01], u, v, budget=5000, decayed=False, tol=1e-3)
    dial, = loop.train(inst, optim.make("adam"), [0.01], u, v, budget=5000, decayed=False, tol=1e-3,
                       loop="dial")
    assert dial.status == "interpolated" and dial.steps % 200 == 0 and dial.train < 1e-3
    assert dial.steps <= canonical.steps  # the post-update loss is lower, so it can only stop earlier
    assert dial.train != dial.curve_loss[-1]  # reported train is post-update, the curve pre-update
    big, = loop.train(inst, optim.make("gd"), [10.0], u, v, budget=1000, decayed=False, loop="dial")
    assert big.status == "diverged" and big.steps == 200  # no per-step test: caught at the first check
    budget, = loop.train(inst, optim.make("gd"), [1e-4], u, v, budget=50, decayed=False, loop="dial")
    assert budget.status == "budget" and budget.steps == 50 and math.isfinite(budget.train)
    with pytest.raises(ValueError, match="unknown loop"):
        loop.train(inst, optim.make("gd"), [0.1], u, v, budget=1, decayed=False, loop="no_such_loop")


def test_no_early_stop_runs_every_step_and_tol_still_decides_the_status():
    inst, (u, v) = small()
    stopped, = loop.train(inst, optim.make("adam"), [0.01], u, v, budget=3000, decayed=False, tol=1e-3)
    full, = loop.train(inst, optim.make("adam"), [0.01], u, v, budget=3000, decayed=False, tol=1e-3,
                       early_stop=False)
    assert stopped.steps < 3000 and full.steps == 3000
    assert full.status == "interpolated" and full.train < stopped.train
    assert full.curve_loss[: len(stopped.curve_loss) - 1] == stopped.curve_loss[:-1]


PREFIX_EXP = {"n": 6, "rank": 2, "width": 6, "measurements_per_dof": 2.0, "init": 0.3, "budget": 1200,
              "tol": 1e-4, "check_every": 200}
PREFIX_CELLS = [(method, seed, lr, delta) for method in ("adam", "muon", "gd") for seed in (42, 123)
                for lr in (0.003, 0.03, 3.0) for delta in (0.0, 1e-3)]


@pytest.mark.portable
@pytest.mark.parametrize("long, short", [
    ({"decayed": [], "early_stop": True}, {"budget": 600}),  # a constant lr on a longer budget
    ({"decayed": [], "early_stop": False}, {"budget": 600, "early_stop": True}),
    ({"decayed": ["adam", "muon", "gd"], "early_stop": False}, {"early_stop": True}),  # decay-full -> decay
], ids=["const-longer", "const-no-early-stop", "decayed-no-early-stop"])
def test_a_shorter_run_taken_from_a_longer_one_is_that_run_byte_for_byte(long, short):
    """A run's first steps give the shorter run's record (runner.run_batch's ``prefixes``) byte for
    byte as that run alone gives it, whether it diverged, stopped early before or at the shorter
    budget, or ran it out; and the longer runs' records do not change."""
    import json

    from gaugelab.sensing import runner

    long_exp = {**PREFIX_EXP, **long}
    short_exp = {**long_exp, **short}
    count = len(PREFIX_CELLS)
    made = runner.run_batch("long", long_exp, PREFIX_CELLS, threads=1,
                            prefixes={i: ("short", short_exp) for i in range(count)})
    alone = runner.run_batch("short", short_exp, PREFIX_CELLS, threads=1)
    assert [json.dumps(r, sort_keys=True) for r in made[count:]] == [json.dumps(r, sort_keys=True) for r in alone]
    plain = runner.run_batch("long", long_exp, PREFIX_CELLS, threads=1)
    assert [json.dumps(r, sort_keys=True) for r in made[:count]] == [json.dumps(r, sort_keys=True) for r in plain]
    assert {r["status"] for r in alone} == {"interpolated", "budget", "diverged"}
    stopped = {r["steps"] for r in alone if r["status"] == "interpolated"}
    assert min(stopped) < short_exp["budget"] and short_exp["budget"] in stopped  # before and at its budget


def test_a_run_is_the_prefix_only_of_a_run_whose_first_steps_it_is():
    """prefix_budget: the same settings but the budget and early stop, and nothing of a step that
    depends on the budget before the shorter one ends (a decayed run's lr does); run_batch refuses
    another experiment's run by name."""
    from gaugelab.sensing import runner

    const, decayed = {**PREFIX_EXP, "decayed": []}, {**PREFIX_EXP, "decayed": ["adam"]}
    assert runner.prefix_budget(const, {**const, "budget": 600}, "adam", "float32") == 600
    assert runner.prefix_budget({**decayed, "early_stop": False}, decayed, "adam", "float32") == 1200
    refused = [
        (const, const),  # the same run: a shared one (controls.run_sources), not a prefix
        (const, {**const, "budget": 2400}),  # longer
        (const, {**const, "budget": 600, "early_stop": False}),  # a shorter run must stop early
        (const, {**const, "budget": 500}),  # not at a check
        (decayed, {**decayed, "budget": 600}),  # a decayed run's lr depends on its budget
        (const, {**const, "budget": 600, "init": 0.1}),  # another setting
        ({**const, "loop": "dial"}, {**const, "loop": "dial", "budget": 600}),
    ]
    assert [runner.prefix_budget(long, short, "adam", "float32") for long, short in refused] == [None] * 7
    with pytest.raises(ValueError, match="short's adam runs are not the first steps of long's"):
        runner.run_batch("long", const, PREFIX_CELLS[:1], prefixes={0: ("short", {**decayed, "budget": 600})})


@pytest.mark.portable
def test_a_batch_trains_another_arms_longer_runs_in_place_of_their_first_steps():
    """run_batch's ``arms``: the host's batch (early stop) trains another arm's decayed runs
    without early stop in place of its own runs of the same cells, which are their first steps;
    every record, the arm's and the host's, is the one its own batch gives, byte for byte."""
    import json

    from gaugelab.sensing import runner

    host = {**PREFIX_EXP, "decayed": ["muon"], "early_stop": True}  # the zoo: Muon decayed
    full = {**PREFIX_EXP, "decayed": ["adam", "muon", "gd"], "early_stop": False}  # decay-full
    hosted = [i for i, cell in enumerate(PREFIX_CELLS) if cell[0] == "muon"]
    made = runner.run_batch("host", host, PREFIX_CELLS, threads=1, arms={i: ("full", full) for i in hosted},
                            prefixes={i: ("host", host) for i in hosted})

    def text(recs):
        return [json.dumps(r, sort_keys=True) for r in recs]

    alone = runner.run_batch("host", host, PREFIX_CELLS, threads=1)
    full_alone = runner.run_batch("full", full, [PREFIX_CELLS[i] for i in hosted], threads=1)
    others = [i for i in range(len(PREFIX_CELLS)) if i not in hosted]
    assert text(made[i] for i in others) == text(alone[i] for i in others)
    assert text(made[i] for i in hosted) == text(full_alone)
    assert text(made[len(PREFIX_CELLS):]) == text(alone[i] for i in hosted)
    assert {r["status"] for r in full_alone} >= {"interpolated", "budget"}
    assert any(r["steps"] < host["budget"] for r in (alone[i] for i in hosted) if r["status"] == "interpolated")
    with pytest.raises(ValueError, match="full's adam runs cannot join host's batch: its budget differs"):
        runner.run_batch("host", host, PREFIX_CELLS[:1], arms={0: ("full", {**full, "budget": 600})})


def test_deal_never_cuts_a_seed_and_interleaves_the_methods():
    from gaugelab.sensing import dealing

    cells = [(method, lr, seed) for method in ("a", "b", "c") for lr in (1, 2) for seed in (7, 8, 9)]
    deal = lambda shards, cells=cells: dealing.deal(cells, shards, seed=lambda c: c[2], method=lambda c: c[0])
    pieces = deal(2)
    assert sorted(c for p in pieces for c in p) == sorted(cells)
    assert [sorted({c[2] for c in p}) for p in pieces] == [[7, 8], [9]]  # whole seeds, the larger job first
    assert [c[0] for c in pieces[1][:3]] == ["a", "b", "c"]  # each method's first cell, then the seconds
    assert [[c[2] for c in p][:1] for p in deal(3)] == [[7], [8], [9]]
    assert [len(p) for p in deal(4)] == [6, 6, 6, 0]  # more jobs than seeds: the rest empty
    uneven = [c for c in cells if c[2] != 7 or c[1] == 1] + [("d", lr, 9) for lr in range(6)]  # 3, 6, 12 cells
    assert [len(p) for p in deal(2, uneven)] == [9, 12] and [len(p) for p in deal(1, uneven)] == [21]


SHARDED_RUN = """
import json, sys
from gaugelab.core import config
from gaugelab.sensing import dealing, runner
shards, threads = map(int, sys.argv[1:])
exp = {**config.load()["zoo"], "budget": 60, "check_every": 20}
cells = [(method, seed, lr, 0.0) for method, grid in exp["grids"].items() for lr in grid[1:3]
         for seed in (42, 123, 456)]
out = {}
for piece in dealing.deal(cells, shards, seed=lambda c: c[1], method=lambda c: c[0]):
    if not piece:
        continue
    for cell, record in zip(piece, runner.run_batch("zoo", exp, piece, threads=threads)):
        record.pop("environment")
        out[repr(cell)] = json.dumps(record, sort_keys=True)
print(json.dumps(out))
"""


@pytest.mark.portable
def test_records_do_not_depend_on_shards_or_threads():
    """The numerics contract's promise on the zoo's shapes (40x40, 462 measurements): every
    method's records, byte for byte but the environment, for 1, 2 and 3 shards (dealing.deal, as
    the workflow cuts them) and 1 and 2 threads, each in a fresh process as a job is (torch
    resets MKL's threads at a process's first parallel region)."""
    import json
    import subprocess
    import sys

    def run(shards, threads):
        proc = subprocess.run([sys.executable, "-c", SHARDED_RUN, str(shards), str(threads)],
                              capture_output=True, text=True, check=True)
        return json.loads(proc.stdout)

    reference = run(1, 1)
    assert len(reference) == 54
    for shards, threads in ((1, 2), (2, 1), (3, 1), (2, 2), (3, 2)):
        got = run(shards, threads)
        assert [c for c in reference if got[c] != reference[c]] == [], (shards, threads)
