"""The audit (issue 24): real models' gauge symmetries found, verified and put through the triplet;
SGD equivariant and Adam basis-dependent on each; symmetries that biases, RoPE or qk-norm break
reported absent with the measured difference; the A = I twin bit-identical throughout; the census
on a few optimizers; the command line. Tiny models, float64, a few steps."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
import torch

from gaugelab import cli
from gaugelab.core import records, runtime
from gaugelab.tools import audit, census, diagnose, symmetries

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # models come from small configs, never the Hub
STEPS = 5
FLOOR = diagnose.thresholds(torch.float64)["floor"]
NEEDS_HF = {"gpt2", "llama"}
try:
    import transformers  # noqa: F401

    HF = None
except ImportError as exc:
    HF = f"transformers not installed ({exc}); pip install 'gaugelab[audit]'"


@pytest.fixture(autouse=True)
def restore_torch_state():
    """audit() goes through runtime.configure (one thread, deterministic algorithms)."""
    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    yield
    runtime.set_threads(threads)
    torch.use_deterministic_algorithms(deterministic)


def needs(model):
    if model in NEEDS_HF and HF:
        pytest.skip(HF)


def present(record):
    return {s["name"]: s for s in record["symmetries"] if s["present"]}


def absent(record):
    return {s["name"]: s for s in record["symmetries"] if not s["present"]}


# Each model's symmetries follow from its architecture: bias-free attention has the weight-only
# gauges, biased attention moves its biases along, RoPE keeps only the pair rotations.
STRUCTURE = {"mha": {"qk", "vo"}, "encoder": {"qk", "vo"}, "lora": {"lora"}, "gpt2": {"qk+bias", "vo+bias"},
             "llama": {"qk-rope", "vo"}}


@pytest.fixture(scope="module")
def records_by_model():
    cache = {}

    def get(model, optimizer):
        if (model, optimizer) not in cache:
            cache[model, optimizer] = audit.audit(model, optimizer, steps=STEPS, lr=1e-2)
        return cache[model, optimizer]

    return get


@pytest.mark.parametrize("model", sorted(STRUCTURE))
def test_sgd_equivariant_adam_basis_dependent_on_every_gauge(model, records_by_model):
    needs(model)
    sgd, adam = records_by_model(model, "torch.optim:SGD"), records_by_model(model, "torch.optim:Adam")
    assert set(present(sgd)) == set(present(adam)) == STRUCTURE[model]
    for name, s in present(sgd).items():
        assert s["difference"] <= FLOOR and s["difference_generic"] <= FLOOR
        assert s["verdict"] == "equivariant", (name, s["summary"])
        assert {g["verdict"] for g in s["groups"]} == {"equivariant"}, s["groups"]
    for name, s in present(adam).items():
        assert s["verdict"] == "basis-dependent", (name, s["summary"])
        assert s["evidence"]["split_step"] == 1 and s["evidence"]["ratio"] >= diagnose.RATIO
        assert {g["verdict"] for g in s["groups"]} == {"basis-dependent"}, s["groups"]


@pytest.mark.parametrize("model", sorted(STRUCTURE))
def test_identity_twin_is_bit_identical_throughout(model, records_by_model):
    needs(model)
    for optimizer in ("torch.optim:SGD", "torch.optim:Adam"):
        for s in present(records_by_model(model, optimizer)).values():
            assert "identity_first_difference" not in s["evidence"]
            assert s["curve"]["identity"] == [0.0] * len(s["curve"]["step"])
            assert s["curve"]["step"][-1] == STEPS


@pytest.mark.parametrize("model", ["mha-biased", "gpt2"])
def test_biases_break_the_weight_only_qk_gauge(model, records_by_model):
    """PyTorch and GPT-2 initialise their biases to zero, so only the generic point shows it."""
    needs(model)
    record = records_by_model(model, "torch.optim:Adam")
    for name in ("qk", "vo"):
        s = absent(record)[name]
        assert s["difference_generic"] > 1e3 * FLOOR and "bias" in s["breaks"] and "absent" in s["summary"]
    assert present(record)["qk+bias"]["verdict"] == "basis-dependent"


def test_rope_keeps_only_the_frequency_pair_rotations(records_by_model):
    needs("llama")
    record = records_by_model("llama", "torch.optim:SGD")
    full = absent(record)["qk"]
    assert full["difference"] > 1e3 * FLOOR and "rotary" in full["breaks"]
    groups = present(record)["qk-rope"]["groups"]
    assert [g["rotations"] for g in groups] == [2, 2]  # one per key/value head (grouped-query)


def qwen3_qk_norm():
    """A factory (package.module:factory) for a Hugging Face model with qk-norm."""
    from transformers import Qwen3Config, Qwen3ForCausalLM

    torch.manual_seed(0)
    cfg = Qwen3Config(vocab_size=32, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                      num_attention_heads=4, num_key_value_heads=2, head_dim=8, max_position_embeddings=16)
    ids = torch.randint(0, 32, (2, 6), generator=torch.Generator().manual_seed(0))
    return Qwen3ForCausalLM._from_config(cfg, attn_implementation="eager"), {"input_ids": ids, "labels": ids}


def test_qk_norm_breaks_the_qk_gauge_but_not_vo():
    if HF:
        pytest.skip(HF)
    record = audit.audit("test_audit:qwen3_qk_norm", "torch.optim:Adam", steps=2, lr=1e-2)
    gone = absent(record)
    for name in ("qk", "qk-rope"):
        assert name in gone and "qk-norm" in gone[name]["breaks"] and gone[name]["difference_generic"] > 1e3 * FLOOR
    assert set(present(record)) == {"vo"}


def test_a_wrong_action_changes_the_function():
    """Negative control of the verification: Q rotated without K is no symmetry."""
    subject = audit.load_subject("mha", torch.float64)
    qk = next(c for c in symmetries.candidates(subject.model) if c.name == "qk")
    q_only = [symmetries.Group(g.module, g.dim, [symmetries.Orbit(o.slices[1:], []) for o in g.orbits])
              for g in qk.groups]  # slices[0] is the key block
    bed = audit.ModuleTestbed(subject, symmetries.Candidate("q-only", q_only), torch.float64)
    assert audit.verify(bed, FLOOR)["difference"] > 1e-3


def test_pair_rotations_are_orthogonal_and_identity_at_zero():
    a = symmetries.pair_rotation(torch.tensor([0.3, 1.1, -2.0], dtype=torch.float64))
    assert torch.allclose(a @ a.T, torch.eye(6, dtype=torch.float64), atol=1e-15)
    assert torch.equal(symmetries.pair_rotation(torch.zeros(3, dtype=torch.float64)), torch.eye(6, dtype=torch.float64))


def test_bad_model_specs_are_clear_errors():
    with pytest.raises(audit.AuditError, match="unknown model 'nope'"):
        audit.load_subject("nope", torch.float64)
    with pytest.raises(audit.AuditError, match="cannot import"):
        audit.load_subject("no_such_module:f", torch.float64)
    with pytest.raises(audit.AuditError, match=r"must return \(model, batch\)"):
        audit.load_subject("builtins:dict", torch.float64)
    with pytest.raises(audit.AuditError, match="the factory raised TypeError"):
        audit.load_subject("torch:zeros", torch.float64)


def test_command_line_writes_a_valid_record(tmp_path, capsys):
    out = tmp_path / "audit.json"
    assert cli.main(["audit", "--model", "gaugelab.tools.audit_models:lora", "--optimizer", "torch.optim:SGD",
                     "--lr", "0.01", "--steps", "3", "-o", str(out)]) == 0
    record = records.load(out, records.AUDIT_SCHEMA)
    assert audit.verdicts(record) == {"lora": "equivariant"}
    assert "lora: equivariant" in capsys.readouterr().out


def test_census_of_a_few_optimizers(tmp_path):
    settings = {"steps": 3, "dtype": "float64", "model": "mha"}
    record = census.run("torch", settings, names=["SGD", "Adam", "SparseAdam"], log=lambda _: None)
    rows = {r["optimizer"]: r for r in record["rows"]}
    assert rows["SGD"]["overall"] == "equivariant" and rows["Adam"]["overall"] == "basis-dependent"
    assert rows["SparseAdam"]["overall"] == "failed" and "dense gradients" in rows["SparseAdam"]["reason"]
    assert census.counts(record["rows"])["stepped"] == 2
    records.write_json(tmp_path / "torch.json", record)
    flat = census.table_rows([records.load(tmp_path / "torch.json", records.CENSUS_SCHEMA)])
    assert "SparseAdam" in census.table_html(flat)
    if shutil.which("pdflatex") is None:
        return
    (tmp_path / "doc.tex").write_text("\\documentclass{article}\\usepackage{booktabs,longtable}\\begin{document}\n"
                                      + census.table_latex(flat) + "\\end{document}\n")
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"], check=False,
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-2000:]


def test_census_of_pytorch_optimizer_subset():
    pytest.importorskip("pytorch_optimizer", reason="pytorch-optimizer not installed; pip install 'gaugelab[audit]'")
    record = census.run("pytorch_optimizer", {"steps": 3, "dtype": "float64", "model": "mha"},
                        names=["lion", "sgdw"], log=lambda _: None)
    rows = {r["optimizer"]: r["overall"] for r in record["rows"]}
    assert rows == {"lion": "basis-dependent", "sgdw": "equivariant"}


def test_census_builds_the_muon_family_with_parameter_groups():
    """pytorch-optimizer's Muon needs use_muon-flagged groups: built so, and the row says it."""
    pytest.importorskip("pytorch_optimizer", reason="pytorch-optimizer not installed; pip install 'gaugelab[audit]'")
    row, = census.run("pytorch_optimizer", {"steps": 2, "dtype": "float64", "model": "mha"}, names=["muon"],
                      log=lambda _: None)["rows"]
    assert row["built"] and row["stepped"] and "use_muon" in row["reason"]
    assert set(row["verdicts"]) == {"sensing", "mha/qk", "mha/vo"}
