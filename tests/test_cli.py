"""The command line refuses user errors in one line (``gaugelab: <message>``, or argparse's usage
error) with exit status 2, before any training, and never with a traceback."""

import argparse
import os

import pytest
import torch

from gaugelab import arguments, cli
from gaugelab.attention import float64, float64_local
from gaugelab.attention.pairs import Pair
from gaugelab.core import records

MODEL = "f64-mod47-L2d64h4"
SENSING = ["sensing", "--method", "gd", "--lr", "1e-4", "--seed", "42", "--tol", "1e-30", "--budget", "1000000"]
TWINS = ["twins", "--optimizer", "adam", "--twin", "gauge", "--init-seed", "42", "--twin-seed", "777"]
DIAGNOSE = ["diagnose", "--optimizer", "adam", "--no-figure"]
NO_CUDA = pytest.mark.skipif(torch.cuda.is_available(), reason="refusing cuda needs a machine without CUDA")


@pytest.fixture(autouse=True)
def no_training(monkeypatch):
    """Every refusal comes before training: a test that reached it fails at once instead of
    running (SENSING's budget of 10^6 steps at a tiny lr would take many minutes)."""
    def started(*args, **kwargs):
        raise AssertionError("training started")

    from gaugelab.tools import diagnose
    from gaugelab.attention import twins
    from gaugelab.sensing import runner
    for module, name in [(runner, "run_cells"), (twins, "train_pair"), (diagnose, "run_all"),
                         (float64_local, "run")]:
        monkeypatch.setattr(module, name, started)


def refused(argv: list[str], capsys) -> str:
    """Run ``gaugelab argv`` in-process; it must exit 2 with one error line and no traceback.
    Returns that line."""
    try:
        code = cli.main(argv)
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    if lines[0].startswith("usage:"):  # argparse: its usage, then one line "gaugelab <command>: error: ..."
        assert lines[-1].startswith(f"gaugelab {argv[0]}: error: "), err
    else:
        assert len(lines) == 1 and lines[0].startswith("gaugelab: "), err
    return lines[-1]


@pytest.mark.parametrize("command", [SENSING, TWINS, DIAGNOSE], ids=["sensing", "twins", "diagnose"])
@pytest.mark.parametrize("bad", ["folder", "under_a_file", "fifo"])
def test_an_output_that_cannot_be_written_is_refused_before_training(command, bad, tmp_path, capsys):
    (tmp_path / "folder").mkdir()
    (tmp_path / "a_file").write_text("")
    os.mkfifo(tmp_path / "fifo")  # not a regular file: the record's rename would replace it
    output = {"folder": tmp_path / "folder", "under_a_file": tmp_path / "a_file" / "run.json",
              "fifo": tmp_path / "fifo"}[bad]
    line = refused([*command, "-o", str(output)], capsys)
    assert str(output) in line and ("folder" in line or "regular file" in line)
    assert not list(tmp_path.rglob("*.json"))


def test_a_table9_root_that_is_a_file_is_refused(tmp_path, capsys):
    (tmp_path / "a_file").write_text("")
    line = refused(["table9", "--model", MODEL, "--root", str(tmp_path / "a_file" / "sub")], capsys)
    assert "--root" in line and "not a folder" in line


@pytest.mark.parametrize("argv, message", [
    ([*SENSING, "--n", "4", "--rank", "9"], "config key zoo/rank: planted rank 9 exceeds n = 4"),
    ([*SENSING, "--width", "2"], "config key zoo/width: factor width 2 is below the planted rank 3"),
    ([*SENSING, "--budget", "1000000000000"], "config key zoo/budget: 1000000000000 is greater than the maximum"),
    ([*SENSING, "--config", "/nonexistent.yaml"], "cannot read the configuration: /nonexistent.yaml"),
    ([*SENSING, "--experiment", "nope"], "no sensing experiment 'nope'"),
    ([*SENSING, "--seed", "-3"], "argument --seed: '-3' is not a seed (an integer from 0 to 9223372036854775800)"),
    ([*SENSING, "--seed", str(2**64)], f"argument --seed: '{2**64}' is not a seed"),  # the generator's overflow
    ([*TWINS, "--twin-seed", str(2**64)], f"argument --twin-seed: '{2**64}' is not a seed"),
    pytest.param([*SENSING, "--device", "cuda"], "config key device: cuda, but torch finds no CUDA device",
                 marks=NO_CUDA),
    pytest.param(["table9", "--model", MODEL, "--step1", "--device", "cuda"],
                 "config key table9/step1_device: cuda, but torch finds no CUDA device", marks=NO_CUDA),
    (["audit", "--model", "mha", "--optimizer", "adam", "--symmetry", "bogus"],
     "argument --symmetry: invalid choice: 'bogus'"),
    (["audit", "--model", "mha", "--optimizer", "adam", "--symmetry", "lora"],
     "--symmetry lora: model 'mha' has no such candidate; its candidates: qk, vo"),
    ([*SENSING, "--tol", "-1"], "argument --tol: '-1' is not a positive finite number"),
    ([*SENSING, "--threads", "0"], "argument --threads: '0' is not a positive integer"),
    ([*SENSING, "--lr", "0"], "argument --lr: '0' is not a positive finite number"),
    ([*SENSING, "--lr", "nan"], "argument --lr: 'nan' is not a positive finite number"),
    ([*SENSING, "--lr", "inf"], "argument --lr: 'inf' is not a positive finite number"),
    ([*SENSING, "--init", "0"], "argument --init: '0' is not a positive finite number"),
    ([*SENSING, "--perturbation", "nan"], "argument --perturbation: 'nan' is not a finite number"),
    ([*DIAGNOSE, "--lr", "-1"], "argument --lr: '-1' is not a positive finite number"),
    ([*DIAGNOSE, "--steps", "0"], "argument --steps: '0' is not a positive integer"),
    ([*DIAGNOSE, "--steps", "-5"], "argument --steps: '-5' is not a positive integer"),
    ([*DIAGNOSE, "--steps", "100000000"], "config key diagnose/steps: 100000000 is greater than the maximum"),
    ([*DIAGNOSE, "--sigma", "-1"], "argument --sigma: '-1' is not a positive finite number"),
    ([*DIAGNOSE, "--threads", "0"], "argument --threads: '0' is not a positive integer"),
    ([*DIAGNOSE, "--option", "x=["], "--option x=[: the value is not YAML"),
    ([*TWINS, "--steps", "0"], "argument --steps: '0' is not a positive integer"),
    ([*TWINS, "--steps", "-1"], "argument --steps: '-1' is not a positive integer"),
    ([*TWINS, "--lr", "0"], "argument --lr: '0' is not a positive finite number"),
    ([*TWINS, "--init-seed", "-1"], "argument --init-seed: '-1' is not a seed"),
    (["twins", "--optimizer", "adam", "--twin", "noise", "--init-seed", "42", "--sigma", "-1"],
     "argument --sigma: '-1' is not a positive finite number"),
    (["twins", "--optimizer", "adam", "--twin", "noise", "--init-seed", "42"], "noise twin with sigma 0.0"),
    ([*SENSING, "--p", "0.5"], "--p and --convention set an Adam-p variant: they need --method adam_p"),
    ([*SENSING, "--method", "adam_p", "--p", "1.5"], "argument --p: '1.5' is not a number in [0, 1]"),
    ([*SENSING, "--method", "adam_p", "--experiment", "dial", "--rank", "50"], "config key dial/rank: planted rank 50"),
    (["table9", "--steps", "0"], "argument --steps: '0' is not a positive integer"),
    (["table9", "--steps", "-2"], "argument --steps: '-2' is not a positive integer"),
    (["table9", "--threads", "0"], "argument --threads: '0' is not a positive integer"),
    (["table9", "--model", MODEL, "--steps", "100000000"],
     f"config key table9/steps/{MODEL}: 100000000 is greater than the maximum"),
    (["table9", "--step1", "--steps", "1"], "--steps does not apply to --step1"),
    (["table9", "--model", MODEL, "--corpus", "/nonexistent/input.txt"],
     "--corpus /nonexistent/input.txt: no such file"),
    (["summarize", "--experiment", "nope", "/nonexistent.json"], "no sensing experiment 'nope'"),
    (["summarize", "/nonexistent.json"], "/nonexistent.json"),
])
def test_a_bad_value_is_refused_in_one_line(argv, message, tmp_path, capsys):
    if "-o" not in argv and argv[0] in ("sensing", "twins", "diagnose", "summarize", "audit"):
        argv = [*argv, "-o", str(tmp_path / "run.json")]
    if argv[0] == "table9":
        argv = [*argv, "--root", str(tmp_path)]
    assert message in refused(argv, capsys)
    assert not list(tmp_path.rglob("*.json"))


@pytest.mark.parametrize("option, message", [
    ("betas=oops", "could not be built"),  # YAML reads a string where Adam wants a pair
    ("lrr=1", "unexpected keyword argument 'lrr'"),
])
def test_an_option_the_optimizer_rejects_is_refused_before_training(option, message, tmp_path, capsys, monkeypatch):
    """The diagnostic builds each copy's optimizer before its first step; a bad option fails there."""
    from gaugelab.tools.diagnose import triplet

    monkeypatch.undo()  # run_all itself, with the triplet's training replaced
    monkeypatch.setattr(triplet, "checkpoints", lambda steps: pytest.fail("training started"))
    out = tmp_path / "x.json"
    line = refused([*DIAGNOSE[:2], "torch.optim:Adam", "--no-figure", "--option", option, "-o", str(out)], capsys)
    assert "torch.optim:Adam" in line and message in line and not out.exists()


def test_a_config_that_is_not_yaml_is_refused(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("zoo: {n: [\n")
    line = refused([*SENSING, "--config", str(bad), "-o", str(tmp_path / "run.json")], capsys)
    assert f"the configuration is not valid YAML: {bad}" in line and "line 2" in line


def test_a_config_error_in_the_file_names_the_key(tmp_path, capsys):
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("twins: {d: 30}\nzoo: {tol: 0}\n")
    line = refused([*TWINS, "--config", str(cfg), "-o", str(tmp_path / "pair.json")], capsys)
    assert "config key twins/d: d = 30 is not a multiple of H = 4" in line and "config key zoo/tol" in line


@pytest.mark.parametrize("text, message", [
    ("0\n", "the configuration is not a mapping: {cfg}: holds 0, not keys and values"),
    ("false\n", "the configuration is not a mapping: {cfg}: holds False"),
    ("[]\n", "the configuration is not a mapping: {cfg}: holds []"),
    ("seeds: [42]\nzoo: {n: 8}\nseeds: [1]\n", "the configuration gives a key twice: {cfg}: key seeds is given "
                                               "twice (lines 1 and 3)"),
    ("zoo:\n  n: 8\n  n: 9\n", "{cfg}: key zoo/n is given twice (lines 2 and 3)"),
    ('{"seeds": [42], "seeds": [1]}', "the configuration gives a key twice: {cfg}: key 'seeds' is given twice"),
    (b"seeds: [42]  # caf\xe9\n", "cannot read the configuration: {cfg}: not UTF-8 (byte 0xe9 at offset 18)"),
])
def test_a_config_file_that_is_not_a_mapping_of_unique_keys_in_utf8_is_refused(text, message, tmp_path, capsys):
    """A file holding 0, false or [] was read as the defaults; a repeated key kept its last
    value; bytes that are not UTF-8 ended in a traceback."""
    cfg = tmp_path / "cfg.yaml"
    cfg.write_bytes(text if isinstance(text, bytes) else text.encode())
    line = refused([*SENSING, "--config", str(cfg), "-o", str(tmp_path / "run.json")], capsys)
    assert message.format(cfg=cfg) in line


def test_a_table9_corpus_that_is_not_the_corpus_is_refused_naming_the_flag(tmp_path, capsys):
    (tmp_path / "input.txt").write_text("not Shakespeare\n")
    line = refused(["table9", "--model", "f64-text-L6d256h8", "--step1", "--corpus", str(tmp_path / "input.txt"),
                    "--root", str(tmp_path)], capsys)
    assert line.startswith(f"gaugelab: --corpus {tmp_path / 'input.txt'}: ") and "is not the tiny-Shakespeare" in line


@pytest.mark.workflow
def test_table_into_a_missing_folder_creates_it(tmp_path):
    """`gaugelab table ... -o new/folder/t.tex` makes the folder, as the commands that write
    records do (it ended in FileNotFoundError). The input is a real record of the workflow's job."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    smoke = root / "tests" / "config" / "smoke.yaml"
    record = "results/runs/nuclear_reference/seed42.json"
    subprocess.run([sys.executable, "-m", "snakemake", "-s", str(root / "Snakefile"), "--directory", str(tmp_path),
                    "--configfile", str(smoke), "--cores", "1", record], check=True, capture_output=True)
    out = tmp_path / "new" / "folder" / "t.tex"
    proc = subprocess.run([sys.executable, "-m", "gaugelab.cli", "table", "nuclear_reference", str(tmp_path / record),
                           "--config", str(smoke), "-o", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert out.read_text().startswith("% Table 2 min-nuclear-norm reference row") and out.with_suffix(".html").is_file()


def jobs_of(argv: list[str], tmp_path, monkeypatch) -> list[str]:
    """The records `gaugelab table9 argv` would write, relative to --root, without training."""
    planned = []
    monkeypatch.setattr(float64_local, "run", lambda jobs, *a, **k: planned.extend(jobs) or 0)
    assert cli.main(["table9", "--model", MODEL, "--optimizer", "adam", "--twin", "gauge", *argv,
                     "--root", str(tmp_path)]) == 0
    return [output.relative_to(tmp_path).as_posix() for _, _, outputs in planned for output in outputs]


def test_a_short_table9_run_does_not_take_the_full_length_records_path(tmp_path, monkeypatch):
    """Item 1: `gaugelab table9 --steps 1` must not write where the `gpu` target's record goes
    (Table 9 would read a 1-step run as the full-length one)."""
    pairs = [p for p in Pair.listed(cli.configuration.load()["table9"]["pairs"])
             if p.optimizer == "adam" and p.twin == "gauge"]
    full = [float64.full_run_path(MODEL, p) for p in pairs]
    short = jobs_of(["--steps", "1"], tmp_path, monkeypatch)
    assert short == [float64_local.short_run_path(MODEL, p, 1) for p in pairs] and not set(short) & set(full)
    assert all(path.startswith(f"results/runs/table9-short/steps1/{MODEL}/adam/gauge/") for path in short)
    assert jobs_of(["--steps", "1500"], tmp_path, monkeypatch) == full  # the configuration's length
    assert jobs_of([], tmp_path, monkeypatch) == full
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text(f"table9: {{steps: {{{MODEL}: 1}}}}\n")  # a configuration whose length is 1
    assert jobs_of(["--steps", "1", "--config", str(cfg)], tmp_path, monkeypatch) == full


def test_a_short_table9_run_writes_its_record_apart(tmp_path, monkeypatch, capsys):
    """End to end (one identity pair, one step, a worker process: about 10 s)."""
    monkeypatch.undo()
    argv = ["table9", "--model", MODEL, "--optimizer", "adam", "--twin", "identity", "--steps", "1",
            "--device", "cpu", "--root", str(tmp_path)]
    assert cli.main(argv) == 0, capsys.readouterr()
    written = [p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.json")]
    pair = next(p for p in Pair.listed(cli.configuration.load()["table9"]["pairs"])
                if p.optimizer == "adam" and p.twin == "identity")
    assert written == [float64_local.short_run_path(MODEL, pair, 1)]
    assert records.read_twin(tmp_path / written[0])["steps"] == 1


def test_twins_steps_keeps_the_configured_checkpoints_it_reaches(tmp_path, monkeypatch):
    """A shorter pair from the command line is not refused for the configuration's later
    checkpoints: it measures those it reaches (and its last step)."""
    from gaugelab.attention import twins

    seen = {}

    def train(pair, settings, **kwargs):
        seen.update(settings)
        raise SystemExit(0)

    monkeypatch.setattr(twins, "train_pair", train)
    with pytest.raises(SystemExit):
        cli.main([*TWINS, "--steps", "60", "-o", str(tmp_path / "pair.json")])
    assert seen["steps"] == 60 and seen["checkpoints"] == [0, 1, 10, 50]


@pytest.mark.parametrize("check, good, bad", [
    (arguments.positive_int, {"1": 1, "10000": 10000}, ["0", "-1", "1.5", "x", "1e4"]),
    (arguments.positive_float, {"1e-3": 1e-3, "2": 2.0}, ["0", "-1", "nan", "inf", "-inf", "x"]),
    (arguments.finite_float, {"-1e-7": -1e-7, "0": 0.0}, ["nan", "inf", "x"]),
    (arguments.unit_interval, {"0": 0.0, "0.25": 0.25, "1": 1.0}, ["-0.1", "1.01", "nan", "x"]),
])
def test_argument_types(check, good, bad):
    assert {text: check(text) for text in good} == good
    for text in bad:
        with pytest.raises(argparse.ArgumentTypeError, match=repr(text)):
            check(text)


@pytest.mark.portable
def test_a_dial_variant_from_the_command_line_is_the_workflows_record(tmp_path, monkeypatch):
    """`gaugelab sensing --experiment dial --method adam_p --p P --convention C` gives the record the
    dial's training job gives that cell (the smoke configuration's dial: a second or two), bit for
    bit under the portable mode, whose records do not depend on the batch a run shares."""
    from pathlib import Path

    from gaugelab.sensing import dial, runner

    monkeypatch.undo()
    smoke = str(Path(__file__).parent / "config" / "smoke.yaml")
    out = tmp_path / "dial.json"
    assert cli.main(["sensing", "--experiment", "dial", "--method", "adam_p", "--p", "0.5", "--convention", "geo",
                     "--lr", "1e-2", "--seed", "42", "--config", smoke, "-o", str(out)]) == 0
    settings = cli.configuration.load(smoke)["dial"]
    variants = dial.variants(settings["ps"], settings["conventions"])
    batch = runner.run_batch("dial", settings, [(name, 42, lr, 0.0) for name in variants for lr in settings["lrs"]],
                             rules=variants)
    job = next(r for r in batch if r["method"] == "geo_p0.5" and r["lr"] == 1e-2)
    untimed = {k: v for k, v in records.read(out).items() if k not in ("wall_s", "digest")}
    assert untimed == {k: v for k, v in job.items() if k not in ("wall_s", "digest")}
