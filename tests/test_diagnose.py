"""The equivariance diagnostic: each verdict on a small optimizer written here, the registry's
verdicts against the engine's own a-priori classes, bad input, files, the command line, and the
workflow target (marked ``workflow``)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from gaugelab import cli, optim
from gaugelab.paper import tables
from gaugelab.core import records, runtime
from gaugelab.tools import diagnose

STEPS = 20  # enough for every verdict but "chaotic", which needs its chaos to saturate


@pytest.fixture(autouse=True)
def restore_torch_state():
    """diagnose() goes through runtime.configure (one thread, deterministic algorithms)."""
    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    yield
    runtime.set_threads(threads)
    torch.use_deterministic_algorithms(deterministic)


# --- small optimizers, one per verdict ------------------------------------------------------------


class PlainSGD(torch.optim.Optimizer):
    """p ← p − lr·g: commutes with any orthogonal change of basis. Subclasses change the direction."""

    def __init__(self, params, lr=1e-2):
        super().__init__(params, {"lr": lr})

    def direction(self, p):
        return p.grad

    @torch.no_grad()
    def step(self, closure):
        with torch.enable_grad():
            loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                p.add_(self.direction(p), alpha=-group["lr"])
        return loss


class SignSGD(PlainSGD):
    """p ← p − lr·sign(g): entrywise, so it sees the basis from the first step."""

    def direction(self, p):
        return torch.sign(p.grad)


class LogisticSGD(PlainSGD):
    """Equivariant but chaotic: the step is scaled by a logistic-map iterate kicked each step by
    the gauge-invariant ‖θ‖², so round-off in ‖θ‖² is doubled every step until it is O(1)."""

    def __init__(self, params, lr=1e-2):
        super().__init__(params, lr)
        self.x = 0.3

    @torch.no_grad()
    def step(self, closure):
        with torch.enable_grad():
            loss = closure()
        params = [p for group in self.param_groups for p in group["params"]]
        kick = 1e3 * float(sum(p.pow(2).sum() for p in params))
        self.x = (4.0 * self.x * (1.0 - self.x) + kick) % 1.0
        for p in params:
            p.add_(p.grad, alpha=-self.param_groups[0]["lr"] * self.x)
        return loss


class GlobalNoiseSGD(PlainSGD):
    """A determinism bug: draws from the global generator inside ``step``."""

    def direction(self, p):
        return p.grad + 1e-6 * torch.randn_like(p)


class NoClosureSGD(torch.optim.Optimizer):
    """The other torch idiom: ``step()`` without a closure, gradients already in ``.grad``."""

    def __init__(self, params, lr=1e-2):
        super().__init__(params, {"lr": lr})

    @torch.no_grad()
    def step(self):
        for group in self.param_groups:
            for p in group["params"]:
                p.add_(p.grad, alpha=-group["lr"])


def scaled_gd_rule(scale: float = 1.0) -> optim.Rule:
    """A functional rule written here: Δ = −lr·scale·g (equivariant)."""
    return optim.Rule("scaled_gd", True, lambda params: {},
                      lambda grads, state, lr, t: ([-(lr * scale) * g for g in grads], state))


# --- verdicts ------------------------------------------------------------------------------------


def test_equivariant_optimizer_stays_at_the_floor():
    report = diagnose.diagnose(PlainSGD, steps=STEPS)
    limits, ev = report["thresholds"], report["evidence"]
    assert report["verdict"] == "equivariant", report["summary"]
    assert ev["gauge_max"] <= limits["floor"]
    assert ev["noise_at_end"] > 1e3 * ev["gauge_max"]  # far below its noise twin
    assert report["curve"]["identity"] == [0.0] * len(report["curve"]["step"])
    assert not report["global_rng_used"]


def test_basis_dependent_optimizer_splits_at_step_one():
    report = diagnose.diagnose(SignSGD, steps=STEPS)
    ev = report["evidence"]
    assert report["verdict"] == "basis-dependent", report["summary"]
    assert ev["split_step"] == 1
    assert ev["ratio"] >= diagnose.RATIO
    assert ev["gauge_at_split"] > 1e-3  # structural, not round-off
    assert report["curve"]["identity"] == [0.0] * len(report["curve"]["step"])  # deterministic


def test_chaotic_optimizer_tracks_its_noise_twin():
    report = diagnose.diagnose(LogisticSGD, steps=100)
    ev = report["evidence"]
    assert report["verdict"] == "chaotic", report["summary"]
    assert ev["split_step"] > 1 and ev["ratio"] < 1  # leaves the floor late, below its noise twin
    assert ev["late_decades"] < diagnose.DECADES
    assert ev["gauge_max"] > 1e-3  # it did leave the floor


def test_global_generator_in_step_is_a_determinism_failure():
    report = diagnose.diagnose(GlobalNoiseSGD, steps=STEPS)
    assert report["verdict"] == "determinism failure", report["summary"]
    assert report["evidence"]["identity_first_difference"] == 1
    assert report["global_rng_used"]
    assert "not bit-identical" in report["summary"]


def test_an_optimizer_that_does_not_move_is_inconclusive():
    report = diagnose.diagnose(PlainSGD, steps=STEPS, lr=1e-14)
    assert report["verdict"] == "inconclusive"
    assert "moved" in report["summary"]


def test_divergence_is_inconclusive_not_a_crash():
    report = diagnose.diagnose("gd", steps=STEPS, lr=10.0)
    assert report["verdict"] == "inconclusive"
    assert "diverged" in report["summary"]


def test_an_optimizer_without_a_closure_runs_the_same_steps():
    a = diagnose.diagnose(NoClosureSGD, steps=STEPS)
    b = diagnose.diagnose(PlainSGD, steps=STEPS)
    assert a["verdict"] == "equivariant" and a["curve"] == b["curve"]


def test_engine_rule_written_here_and_its_options():
    report = diagnose.diagnose(scaled_gd_rule, options={"scale": 0.5}, steps=STEPS)
    assert report["verdict"] == "equivariant" and report["kind"] == "engine"
    p0 = diagnose.diagnose("adam_p", options={"p": 0}, steps=STEPS)
    assert p0["verdict"] == "equivariant"  # the dial's p = 0 end is scalar-Adam


def _synthetic(gauge, noise):
    """A run dict with the given every-step drifts (the identity twin exact, the base moved)."""
    return {"dense": {"gauge": gauge, "noise": noise, "identity": [0.0] * len(gauge)},
            "identity_bit_identical": True, "identity_first_difference": None, "diverged_at": None,
            "base_moved": 1.0}


@pytest.mark.parametrize("gauge, noise, expected", [
    ([1e-16, 1e-16, 1e-16], [1e-8, 1e-8, 1e-8], "equivariant"),
    ([1e-16, 1e-1, 1e-1], [1e-8, 1e-8, 1e-8], "basis-dependent"),  # structural split at step 1
    ([1e-16, 1e-13, 5e-12, 1e-9, 1e-7], [1e-8, 1e-7, 1e-5, 1e-3, 1e-2], "chaotic"),  # grows below its noise twin
    ([1e-16, 1e-9, 1e-9, 1e-9], [1e-8, 1e-8, 1e-8, 1e-8], "inconclusive"),  # jumps past the floor, weakly
])
def test_verdict_rules_on_synthetic_curves(gauge, noise, expected):
    name, evidence, sentence = diagnose.verdict(_synthetic(gauge, noise), diagnose.thresholds(torch.float64))
    assert name == expected, sentence


# --- agreement with the property suite's classification -------------------------------------------


@pytest.mark.parametrize("name", sorted(optim.REGISTRY))
def test_registry_verdicts_agree_with_the_a_priori_class(name):
    """The diagnostic against the engine's own class (Rule.equivariant, which the property suite's
    T4/T5 assert), not against a list typed here; at the tool's defaults (100 float64 steps)."""
    report = diagnose.diagnose(name)
    expected = "equivariant" if optim.make(name).equivariant else "basis-dependent"
    assert report["verdict"] == expected, report["summary"]
    assert report["a_priori_equivariant"] == (name in optim.EQUIVARIANT)


@pytest.mark.parametrize("source, expected", [("torch.optim:SGD", "equivariant"),
                                              ("torch.optim:Adam", "basis-dependent")])
def test_torch_builtins(source, expected):
    report = diagnose.diagnose(source)
    assert report["kind"] == "torch" and report["label"] == source.replace("torch.optim:", "torch_").lower()
    assert report["verdict"] == expected, report["summary"]


def test_torch_and_engine_agree_step_for_step():
    """torch's SGD and the engine's GD are the same rule: the same drift curves to round-off."""
    a = diagnose.diagnose("torch.optim:SGD", steps=STEPS)["curve"]
    b = diagnose.diagnose("gd", steps=STEPS)["curve"]
    assert a["step"] == b["step"]
    assert all(abs(x - y) <= 1e-6 * y for x, y in zip(a["noise"], b["noise"]))


# --- thresholds -----------------------------------------------------------------------------------


def test_thresholds_follow_the_dtype_epsilon():
    for dtype in (torch.float32, torch.float64):
        eps = torch.finfo(dtype).eps
        t = diagnose.thresholds(dtype)
        assert t["eps"] == eps and t["floor"] == eps ** 0.75 and t["sigma"] == eps ** 0.5
        assert eps < t["floor"] < t["sigma"] < 1
    assert diagnose.thresholds(torch.float32)["floor"] > diagnose.thresholds(torch.float64)["floor"]


def test_bit_identical_compares_bits():
    nan = torch.tensor([math.nan, 1.0], dtype=torch.float64)
    assert diagnose.bit_identical([nan], [nan.clone()])
    assert not diagnose.bit_identical([torch.tensor([0.0])], [torch.tensor([-0.0])])
    assert not diagnose.bit_identical([torch.ones(2)], [torch.ones(2, dtype=torch.float64)])


def test_checkpoints_every_step_then_log_spaced():
    marks = diagnose.checkpoints(1000)
    assert marks[:21] == list(range(21)) and marks[-1] == 1000
    assert len(marks) < 21 + 2 * 20 + 2
    assert diagnose.checkpoints(3) == [0, 1, 2, 3]


# --- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize("source, message", [
    ("no_such_package.optimizers:Fancy", "cannot import module 'no_such_package.optimizers'"),
    ("torch.optim:Fancy", "module 'torch.optim' has no attribute 'Fancy'"),
    ("collections:OrderedDict", "is the class OrderedDict, not a torch.optim.Optimizer subclass"),
    ("math:pi", "is a float, not a torch.optim.Optimizer subclass"),
    ("adamm", "unknown optimizer 'adamm'"),
    ("torch.optim:", "use a registry name"),
])
def test_bad_optimizer_is_a_clear_error(source, message):
    with pytest.raises(diagnose.DiagnoseError, match=message.replace(".", r"\.").replace("(", r"\(")):
        diagnose.resolve(source)


def test_a_factory_that_does_not_return_an_optimizer():
    with pytest.raises(diagnose.DiagnoseError, match="returned list, not a torch.optim.Optimizer"):
        diagnose.diagnose(lambda params, lr: [], steps=1)
    with pytest.raises(diagnose.DiagnoseError, match="could not be built"):
        diagnose.diagnose("math:sqrt", steps=1)


def test_an_optimizer_whose_step_raises_is_named():
    with pytest.raises(diagnose.DiagnoseError, match="'torch.optim:SparseAdam' failed at step 1"):
        diagnose.diagnose("torch.optim:SparseAdam", steps=1)


def test_unknown_testbeds():
    with pytest.raises(diagnose.DiagnoseError, match="unknown testbed 'vision'"):
        diagnose.testbeds_of("vision")
    assert diagnose.testbeds_of("both") == ["sensing", "attention"]
    with pytest.raises(diagnose.DiagnoseError, match="unknown testbed 'vision'"):
        diagnose.run_all("gd", ["sensing", "vision"], steps=1)  # before any training


# --- the attention testbed (built on the attention twins' engine) ------------------------------------


@pytest.mark.parametrize("name", sorted(optim.REGISTRY))
def test_attention_verdicts_agree_with_the_a_priori_class(name):
    report = diagnose.diagnose(name, "attention", steps=3)
    expected = "equivariant" if optim.make(name).equivariant else "basis-dependent"
    assert report["verdict"] == expected, report["summary"]


def test_attention_twins_are_the_twins_engine():
    bed = diagnose.make_testbed("attention", torch.float64)
    base = bed.initial()
    assert diagnose.bit_identical(bed.gauge(base, identity=True), base)  # A = I: exact
    with torch.no_grad():
        z, zg = bed.output(base), bed.output(bed.gauge(base))
    assert 0 < diagnose.drift(z, zg) < 1e-13  # same function, another basis
    moved = [n for n, a, b in zip(bed.names, base, bed.gauge(base)) if not torch.equal(a, b)]
    assert moved and all(n.endswith((".W_Q", ".W_K")) for n in moved)
    noisy = [n for n, a, b in zip(bed.names, base, bed.noise(base, 1e-8)) if not torch.equal(a, b)]
    assert noisy == moved


# --- files, figure, table, command line -------------------------------------------------------------


@pytest.fixture(scope="module")
def two_bundles():
    return [diagnose.run_all(src, ["sensing"], steps=STEPS) for src in ("gd", "adam")]


def test_json_figure_and_table(two_bundles, tmp_path):
    written = diagnose.write(two_bundles[1], tmp_path / "adam.json", tmp_path / "adam")
    assert written == [str(tmp_path / p) for p in ("adam.json", "adam.sensing.pdf", "adam.sensing.png")]
    again = diagnose.read_bundle(tmp_path / "adam.json")
    assert again["reports"]["sensing"]["verdict"] == "basis-dependent"
    assert (tmp_path / "adam.sensing.png").read_bytes()[:4] == b"\x89PNG"
    rows = diagnose.summary_rows(two_bundles)
    assert [r["verdict"] for r in rows] == ["equivariant", "basis-dependent"]
    html, tex = tables.diagnosis_html(rows, diagnose.caption(rows)), tables.diagnosis_latex(rows)
    assert "all agree with their a-priori class" in html and "\\begin{tabular}" in tex
    (tmp_path / "bad.json").write_text("{\"schema\": \"something else\"}")
    with pytest.raises(records.RecordError, match="bad.json: field 'schema' is 'something else', not a gaugelab"):
        diagnose.read_bundle(tmp_path / "bad.json")


def test_latex_table_compiles_for_every_kind_of_row(two_bundles, tmp_path):
    import shutil

    if shutil.which("pdflatex") is None:
        pytest.skip("pdflatex not installed (Debian: texlive-latex-recommended)")
    bundles = two_bundles + [diagnose.run_all(GlobalNoiseSGD, ["sensing"], steps=3),
                             diagnose.run_all(PlainSGD, ["sensing"], steps=3, lr=1e-14),
                             diagnose.run_all("gd", ["sensing"], steps=STEPS, lr=10.0)]
    rows = diagnose.summary_rows(bundles)
    assert [r["verdict"] for r in rows][2:] == ["determinism failure", "inconclusive", "inconclusive"]
    (tmp_path / "diagnose.tex").write_text(tables.diagnosis_latex(rows))
    (tmp_path / "doc.tex").write_text("\\documentclass{article}\\usepackage{booktabs}\\begin{document}"
                                      "\\input{diagnose.tex}\\end{document}\n")
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:]


def test_plan_from_the_config():
    from gaugelab import configuration

    settings = configuration.load()["diagnose"]
    plan = diagnose.plan(settings)
    assert list(plan)[: len(optim.REGISTRY)] == list(optim.REGISTRY)
    assert plan["torch_lbfgs"]["lr"] == 1.0 and plan["torch_sgd"]["lr"] == settings["lr"]


@pytest.mark.parametrize("bad, key", [
    ({"diagnose": {"testbeds": ["vision"]}}, "diagnose/testbeds/0"),
    ({"diagnose": {"optimizers": ["not an import path"]}}, "diagnose/optimizers/0"),
    ({"diagnose": {"settings": {"torch.optim:SGD": {"lrr": 1.0}}}}, "diagnose/settings/torch.optim:SGD"),
    ({"diagnose": {"steps": 0}}, "diagnose/steps"),
])
def test_bad_diagnose_config_names_the_key(bad, key):
    from gaugelab import configuration
    from gaugelab.core import config

    with pytest.raises(config.ConfigError, match=f"config key {key}:"):
        configuration.validate(bad)


def test_command_line_with_a_user_module(tmp_path, monkeypatch, capsys):
    (tmp_path / "my_optimizers.py").write_text(textwrap.dedent("""
        import torch

        class Sign(torch.optim.Optimizer):
            def __init__(self, params, lr=1e-2):
                super().__init__(params, {"lr": lr})

            @torch.no_grad()
            def step(self, closure):
                with torch.enable_grad():
                    loss = closure()
                for p in self.param_groups[0]["params"]:
                    p.add_(torch.sign(p.grad), alpha=-self.param_groups[0]["lr"])
                return loss
        """))
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "sign.json"
    assert cli.main(["diagnose", "--optimizer", "my_optimizers:Sign", "--steps", "5", "-o", str(out),
                     "--expect", "basis-dependent"]) == 0
    printed = capsys.readouterr().out
    assert "my_optimizers:Sign on sensing: basis-dependent" in printed
    assert json.loads(out.read_text())["reports"]["sensing"]["verdict"] == "basis-dependent"
    assert (tmp_path / "sign.sensing.pdf").exists()
    assert cli.main(["diagnose", "--optimizer", "my_optimizers:Sign", "--steps", "5", "--no-figure",
                     "-o", str(out), "--expect", "equivariant"]) == 1


def test_command_line_both_testbeds(tmp_path, capsys):
    out = tmp_path / "gd.json"
    assert cli.main(["diagnose", "--optimizer", "gd", "--testbed", "both", "--steps", "2", "-o", str(out)]) == 0
    assert sorted(json.loads(out.read_text())["reports"]) == ["attention", "sensing"]
    assert (tmp_path / "gd.attention.png").exists() and (tmp_path / "gd.sensing.png").exists()
    assert capsys.readouterr().out.count(": equivariant") == 2


@pytest.mark.parametrize("argv, message", [
    (["--optimizer", "no_such_module:Opt"], "cannot import module"),
    (["--optimizer", "collections:OrderedDict"], "not a torch.optim.Optimizer subclass"),
    (["--optimizer", "gd", "--testbed", "vision"], "unknown testbed"),
    (["--optimizer", "gd", "--option", "beta"], None),
])
def test_command_line_bad_input(argv, message, tmp_path, capsys):
    if message is None:
        with pytest.raises(SystemExit, match="KEY=VALUE"):
            cli.main(["diagnose", *argv, "-o", str(tmp_path / "x.json")])
        return
    assert cli.main(["diagnose", *argv, "-o", str(tmp_path / "x.json")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


# --- the workflow target ------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.workflow
def test_workflow_target_renders_the_table(tmp_path):
    cfg = tmp_path / "diagnose.yaml"
    cfg.write_text("diagnose:\n  steps: 5\n  registry: false\n"
                   "  optimizers: ['gd', 'adam', 'torch.optim:SGD', 'torch.optim:Adam']\n")
    cmd = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "--directory", str(tmp_path),
           "--configfile", str(cfg), "--cores", "1", "diagnose"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    import pandas as pd

    summary = pd.read_csv(tmp_path / "results/diagnose/verdicts.csv")
    assert list(summary["verdict"]) == ["equivariant", "basis-dependent", "equivariant", "basis-dependent"]
    html = (tmp_path / "results/tables/diagnose.html").read_text()
    assert "torch.optim:Adam" in html
    for label in ("gd", "adam", "torch_sgd", "torch_adam"):
        assert (tmp_path / f"results/diagnose/figures/{label}.sensing.png").stat().st_size > 0
    before = (tmp_path / "results/tables/diagnose.tex").read_bytes()
    (tmp_path / "results/tables/diagnose.tex").unlink()
    subprocess.run(cmd, capture_output=True, text=True, check=True)
    assert (tmp_path / "results/tables/diagnose.tex").read_bytes() == before  # byte-identical rerun
