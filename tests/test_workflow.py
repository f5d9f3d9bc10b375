"""The Snakemake workflow end to end on the smoke configuration, in temporary directories.

Real Snakemake runs: the whole DAG, the report, lint, dry-run job counts, bad input, a record
cut short, and an interrupted run that resumes.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml

from gaugelab.paper import compare, published
from gaugelab.core import records, runtime

pytestmark = pytest.mark.workflow

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / "tests" / "config" / "smoke.yaml"
SNAKEMAKE = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile")]
PRODUCTS = ["results/tables/table2.tex", "results/tables/table2.html", "results/figures/figure1.pdf",
            "results/figures/figure1.png", "results/paper/comparison.csv", "results/paper/comparison.html",
            "results/paper/macros.tex", "results/zoo/summary.csv", "results/tables/dial.tex",
            "results/tables/dial.html", "results/figures/dial.pdf", "results/figures/dial.png",
            "results/dial/envelope.csv", "results/dial/fixed_lr.csv", "results/tables/table3.tex",
            "results/tables/table3.html", "results/tables/d5.tex", "results/figures/figure2.pdf",
            "results/figures/figure2.png", "results/twins/comparison.csv"]


def snakemake(workdir, *args, configfile=SMOKE, check=True, **kw):
    cmd = SNAKEMAKE + ["--directory", str(workdir), "--configfile", str(configfile), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}")
    return proc


def products(workdir):
    return {p: (Path(workdir) / p).read_bytes() for p in PRODUCTS}


# `smoke`, the local run of the smoke configuration, is a session fixture in conftest.py: the
# cluster and report tests compare against the same run.


def test_smoke_run_produces_every_output(smoke):
    for path in PRODUCTS:
        assert (smoke / path).stat().st_size > 0, path
    runs = sorted((smoke / "results/runs/zoo").rglob("seed*.json"))
    assert len(runs) == 9 * 2 * 2  # methods x lrs x seeds of the smoke config
    dial_runs = sorted((smoke / "results/runs/dial").rglob("seed*.json"))
    assert len(dial_runs) == 5 * 2 * 2  # Adam-p variants (p1, rms/geo x 0.5, 0) x lrs x seeds
    assert all(records.is_valid(p) for p in runs + dial_runs)
    comparison = pd.read_csv(smoke / "results/paper/comparison.csv", keep_default_na=False)
    # one row per published value, each with a published source; the smoke run reproduces some
    assert list(zip(comparison["source"], comparison["row"], comparison["quantity"])) == [
        v.key for v in published.every()]
    assert set(comparison["verdict"]) <= set(compare.VERDICTS)
    assert (comparison["verdict"] != compare.NOT_RUN).sum() >= 100
    keys = list(zip(comparison["source"], comparison["row"], comparison["quantity"]))
    bound_rows = comparison[[published.lookup(*k).is_bound for k in keys]]
    assert len(bound_rows) and not bound_rows["verdict"].eq(compare.EXACT).any()
    tex = (smoke / "results/tables/table2.tex").read_text()
    assert tex.count("\\\\") >= 10 and "\\begin{tabular}" in tex
    assert (smoke / "results/figures/figure1.png").read_bytes()[:4] == b"\x89PNG"


def test_second_run_has_nothing_to_do(smoke):
    proc = snakemake(smoke, "-n", "--cores", "1")
    assert "Nothing to be done" in proc.stdout + proc.stderr


def test_another_grouping_of_runs_retrains_nothing(smoke):
    """`shards` only groups runs into jobs: a finished run asked for another grouping plans no
    training job (its sensitivity bundles, one per job, are remade)."""
    proc = snakemake(smoke, "-n", "--cores", "1", "--config", "shards=1", "--quiet", "rules")
    planned = {line.split()[0] for line in (proc.stdout + proc.stderr).splitlines()
               if len(line.split()) == 2 and line.split()[1].isdigit()}
    assert "sensing_sensitivity" in planned and not [rule for rule in planned if "_train" in rule], planned


def test_a_perturbed_rerun_is_made_once(smoke):
    """An arm's perturbed rerun of a run it shares with the zoo (the init-scale arm at the zoo's init,
    the decay control's, the flow-limit cells') is the zoo's stored member, byte for byte, and every
    rerun the zoo made of a shared run is taken, not made again (controls.reruns_made)."""
    def key(member):
        return member["method"], member["lr"], member["seed"], member["provenance"]["settings"], member["perturbation"]

    def members(experiment):
        return [m for path in sorted((smoke / "results/runs" / experiment).glob("sensitivity_*.json"))
                for m in records.load(path, records.BUNDLE_SCHEMA)["records"]]

    zoo = {key(m): m for m in members("zoo")}
    taken = 0
    for folder in sorted((smoke / "results/runs").iterdir()):
        if folder.name == "zoo":
            continue
        for member in members(folder.name):
            if key(member) in zoo:
                assert member == zoo[key(member)], f"{folder.name}: {key(member)}"
                taken += 1
            else:
                assert member["experiment"] == folder.name, f"{folder.name}: {key(member)}"
    assert taken, "no arm shares a rerun with the zoo in the smoke configuration"
    log = (smoke / "logs/init_scale_0p001/sensitivity_shard0.log").read_text()
    assert re.search(r"\(([1-9]\d*) taken from the shared bundles\)", log), log

def test_report_contains_figure_table_and_comparison(smoke):
    snakemake(smoke, "--report", "report.html")
    text = (smoke / "report.html").read_text(errors="replace")
    for name in ("figure1.png", "table2.html", "comparison.html", "dial.png", "dial.html"):
        assert name in text, name
    landing = (smoke / "results" / "paper" / "report.rst").read_text()  # the opt-in targets, not run here
    for section, targets in (("Section 8", "``snakemake gpu``, ``snakemake section8``"),
                             ("App. D.9", "``snakemake ladder``"), ("App. D.10", "``snakemake signum_audit``")):
        assert f"- {section}: not run here (opt-in: {targets})" in landing


def pdflatex(tmp_path, body):
    """Compile ``body`` in a minimal article (booktabs, as the tables' users have); fail with its log."""
    if shutil.which("pdflatex") is None:
        if os.environ.get("CI"):
            pytest.fail("pdflatex is missing in CI (.ci/run installs TeX Live)")
        pytest.skip("pdflatex not installed (Debian: texlive-latex-recommended)")
    (tmp_path / "doc.tex").write_text("\\documentclass{article}\\usepackage{booktabs}\\begin{document}\n"
                                      + body + "\\end{document}\n")
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "doc.tex"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert (tmp_path / "doc.pdf").stat().st_size > 0


def test_every_generated_table_compiles_with_pdflatex(smoke, tmp_path):
    generated = sorted(p for p in (smoke / "results").rglob("*.tex") if p.name != "appendix.tex")
    assert len(generated) >= 14, generated  # every table of the smoke run, and the macros
    body = ""
    for i, path in enumerate(generated):
        shutil.copy(path, tmp_path / f"t{i}.tex")
        body += f"\\input{{t{i}.tex}}\\par\n"
    pdflatex(tmp_path, body)


def test_the_reproduction_appendix_compiles_with_every_table_and_figure(smoke, tmp_path):
    if shutil.which("pdflatex") is None:
        pdflatex(tmp_path, "")  # fails in CI, skips elsewhere
    work = tmp_path / "work"
    shutil.copytree(smoke, work, symlinks=True)
    snakemake(work, "--cores", "1", "appendix")
    log = (work / "logs/paper/appendix.log").read_text()
    assert (work / "results/paper/appendix.pdf").read_bytes()[:4] == b"%PDF"
    tex = (work / "results/paper/appendix.tex").read_text()
    tables = sorted(p.name for p in (work / "results/tables").glob("*.tex"))
    figures = sorted(p.name for p in (work / "results/figures").glob("*.pdf"))
    assert all(f"../tables/{name}" in tex for name in tables) and all(f"../figures/{n}" in tex for n in figures)
    assert "Output written on appendix.pdf" in log and "Undefined control sequence" not in log


def test_a_record_cut_short_is_set_aside_and_rerun(smoke, tmp_path):
    work = tmp_path / "work"
    shutil.copytree(smoke, work, symlinks=True)
    victim = work / "results/runs/zoo/adam/lr0.01/seed42.json"
    victim.write_text(victim.read_text()[:100])
    proc = snakemake(work, "--cores", "2")
    assert "set aside results/runs/zoo/adam/lr0.01/seed42.json: " in proc.stderr and "not valid JSON" in proc.stderr
    assert len(list((work / "results/set_aside/runs/zoo/adam/lr0.01").glob("seed42.json.*"))) == 1
    assert records.is_valid(victim)
    assert products(work) == products(smoke)


@pytest.mark.parametrize("bad, key", [
    ("zoo:\n  grids:\n    adamw: [0.01]\n", "zoo/grids"),
    ("zoo:\n  grids:\n    gd: [-0.01]\n", "zoo/grids/gd/0"),
    ("zoo:\n  budgte: 100\n", "budgte"),
    ("zoo:\n  n: 4\n  rank: 9\n", "zoo/rank"),
    ("zoo:\n  grids:\n    adam: [.nan]\n", "zoo/grids/adam/0"),
    ("zoo:\n  budget: 1000000000000\n", "zoo/budget"),
    ("zoo:\n  tol: -1\n", "zoo/tol"),
    ("twins:\n  steps: 6\n", "twins/checkpoints"),
    ("diagnose:\n  optimizers: ['torch.optim:NoSuchOptimizer']\n", "diagnose/optimizers/0"),
])
def test_bad_config_fails_before_any_job(tmp_path, bad, key):
    config = tmp_path / "bad.yaml"
    config.write_text(bad)
    proc = snakemake(tmp_path, "--cores", "1", configfile=config, check=False)
    assert proc.returncode != 0
    assert key in proc.stderr and "gaugelab: invalid configuration" in proc.stderr
    assert "Traceback" not in proc.stderr and 'File "' not in proc.stderr  # a user error, not a crash
    assert not (tmp_path / "results").exists()


def test_where_torch_has_no_mkl_the_workflow_runs_natively_and_refuses_portable_by_name(tmp_path):
    """A torch built without MKL (as on ARM and Apple silicon), in every process of the run
    (sitecustomize): the default mode runs the dial's jobs; numerics: portable is one line naming
    the key, before any job."""
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(
        "import torch.backends.mkl\ntorch.backends.mkl.is_available = lambda: False\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(tmp_path / "site"),
                                                                      os.environ.get("PYTHONPATH")]))}
    env.pop(runtime.MODE_VARIABLE, None)
    refused = snakemake(tmp_path / "portable", "--cores", "1", "dial", "--config", "numerics=portable",
                        check=False, env=env)
    assert refused.returncode != 0 and not (tmp_path / "portable" / "results").exists()
    assert refused.stderr.strip().splitlines()[-1] == (
        "gaugelab: numerics: 'portable' cannot hold on this machine: torch has no MKL here; use "
        "numerics: 'native' (the default), the machine's own kernels")
    snakemake(tmp_path / "native", "--cores", "2", "dial", env=env)
    made = sorted((tmp_path / "native" / "results/runs/dial").rglob("seed*.json"))
    assert made and all(records.load(p)["environment"]["numerics"] == "native" for p in made)
    assert {records.load(p)["environment"]["blas_mode"] for p in made} == {None}  # MKL unseen, as there
    assert (tmp_path / "native" / "results/tables/dial.tex").stat().st_size > 0


def dry_run_counts(workdir, *targets):
    """Jobs per rule of a dry run of the default config, with no --configfile: from another folder
    (--directory) the workflow takes the config.yaml beside its Snakefile."""
    cmd = SNAKEMAKE + ["--directory", str(workdir), "-n", *targets, "--quiet", "rules"]
    proc = subprocess.run(cmd, check=False, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-5000:]
    table = proc.stdout + proc.stderr
    return {line.split()[0]: int(line.split()[1]) for line in table.splitlines()
            if len(line.split()) == 2 and line.split()[1].isdigit()}


def test_dry_run_job_counts_of_the_default_config(tmp_path):
    counts = dry_run_counts(tmp_path)
    # the zoo's 108 runs dealt over `shards` (default 3) jobs, one seed each, each one batch
    assert counts["zoo_train_0"] == counts["zoo_train_1"] == counts["zoo_train_2"] == 1
    assert "zoo_train_3" not in counts
    assert counts["table2"] == counts["figure1"] == counts["comparison"] == 1
    assert counts["dial_train"] == 3 and counts["dial_table"] == counts["dial_figure"] == 1
    zoo = dry_run_counts(tmp_path, "zoo")
    assert zoo["sensing_sensitivity"] == 3  # the zoo's perturbed reruns, one job per shard
    # and those of the cells the other published rows rest on: the 60x60 size, three init scales, the
    # flow-limit cells, the decay control's four arms (every rec-sel cell of Table 6's three, RMSProp's
    # 6x10^4-step arm) and the dial, three shards each
    assert counts["sensing_sensitivity"] == 3 * 11 and counts["report_pages"] == 1
    # and each of those eleven experiments' chaotic cells' ensemble, dealt likewise (one seed a job)
    assert zoo["sensing_ensemble"] == 3 and counts["sensing_ensemble"] == 3 * 11
    assert not [rule for rule in counts if rule.startswith("census")]  # the census is opt-in
    census = dry_run_counts(tmp_path, "census")
    assert census["census_library"] == 2 and census["census_table"] == 1  # torch, pytorch_optimizer


def test_job_times_reads_every_benchmark_file_of_a_run(smoke, tmp_path):
    """benchmarks/job_times.py knows the rule of every job's benchmark file (it stops on one it does
    not) and writes the rows the training jobs' messages read (rules/common.smk: took)."""
    table = tmp_path / "job_times.csv"
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "job_times.py"), str(smoke), "--commit", "smoke",
                    "--csv", str(table), "--write"], check=True, capture_output=True, text=True)
    rows = pd.read_csv(table, keep_default_na=False)
    assert set(rows["rule"]) >= {"sensing_train", "sensing_sensitivity", "dial_train", "nuclear_reference_run",
                                 "diagnose_runs", "twins_run", "table9_step1"}, rows
    experiments = {p.parent.name for p in (smoke / "logs" / "benchmarks").glob("*/train_shard*.tsv")}
    assert set(rows.loc[rows["rule"] == "sensing_train", "key"]) == experiments
    assert (rows["seconds"] >= 0).all() and rows["run"].str.startswith("smoke, ").all()


def test_simulate_cores_replays_every_job_of_a_run(smoke):
    """benchmarks/simulate_cores.py on the smoke run: every job Snakemake recorded, each simulated
    wall time no shorter than its two lower bounds, one core's the whole job time, and 16 cores
    faster than one."""
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "simulate_cores.py"), str(smoke),
                          "--cores", "1", "2", "16"], check=True, capture_output=True, text=True).stdout
    jobs = int(out.split(" jobs,")[0])
    hashes = {json.loads(p.read_text())["job_hash"] for p in (smoke / ".snakemake" / "metadata").rglob("*")
              if p.is_file()}
    assert jobs == len(hashes) > 50, out
    rows = [line.split() for line in out.splitlines()[2:]]
    walls = [float(row[1]) for row in rows]
    assert all(float(row[1]) + 1 >= max(float(row[3]), float(row[4])) for row in rows), out
    assert abs(walls[0] - float(rows[0][4])) <= 1 and walls[0] > walls[-1], out  # one core: all work in a row


def test_the_rules_are_formatted():
    """snakefmt, configured in pyproject.toml ([tool.snakefmt])."""
    proc = subprocess.run([sys.executable, "-m", "snakefmt", "--check", "Snakefile", "rules"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_the_python_is_linted():
    """ruff, configured in pyproject.toml ([tool.ruff]): the package, scripts, tests and benchmarks."""
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_lint_is_clean():
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--lint"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "good condition" in proc.stdout + proc.stderr


def test_a_killed_run_resumes_with_the_readmes_command_and_matches(smoke, tmp_path):
    """kill -9 of Snakemake and its jobs mid-run (the harshest interruption: Snakemake's lock stays),
    then the README's `snakemake --unlock && snakemake --cores all`."""
    cmd = SNAKEMAKE + ["--directory", str(tmp_path), "--configfile", str(SMOKE), "--cores", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    summary = tmp_path / "results/zoo/summary.csv"
    deadline = time.time() + 300
    while time.time() < deadline and not summary.exists():
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # mid-run, once the zoo's training is done
    proc.wait(timeout=60)
    assert not (tmp_path / "results/paper/comparison.csv").exists(), "the interruption should land mid-run"
    runs = sorted((tmp_path / "results/runs/zoo").rglob("seed*.json"))
    assert len(runs) == 36 and all(records.is_valid(p) for p in runs)
    before = {p: p.stat().st_mtime_ns for p in runs}
    snakemake(tmp_path, "--unlock")
    snakemake(tmp_path, "--cores", "2")
    assert all(p.stat().st_mtime_ns == t for p, t in before.items()), "finished training jobs were rerun"
    assert products(tmp_path) == products(smoke)


CONTROL_TABLES = ["table6", "nuclear_reference", "second_size", "init_scale", "lr_sensitivity", "classification"]


def longer(path, short, long):
    """The record of arm ``long``'s run of the same cell as ``path``, a record of arm ``short``."""
    runs = path.parents[3]
    return runs / long / path.relative_to(runs / short)


def test_smoke_run_produces_the_controls(smoke):
    for name in CONTROL_TABLES:
        for ext in ("tex", "html"):
            assert (smoke / f"results/tables/{name}.{ext}").stat().st_size > 0, name
    assert (smoke / "results/figures/lr_sensitivity.png").read_bytes()[:4] == b"\x89PNG"
    full = sorted((smoke / "results/runs/schedule_decay_full").rglob("seed*.json"))
    finished = [records.read(p) for p in full]
    # no early stop in decay-full mode: every run that does not diverge executes the whole budget
    assert len(full) == 5 * 2 * 2 and all(r["steps"] == 400 for r in finished if r["status"] != "diverged")
    # a shorter run that is a longer arm's first steps comes from that run, in one job (rules/common.smk
    # RUN_PREFIX, RUN_HOST): the decay mode's runs but the zoo's (muon) and adafactor (not in
    # decay-full) in decay-full's jobs, const RMSProp at 400 steps inside its 800-step arm, and the
    # zoo's Muon inside decay-full's Muon, which the zoo's jobs train; their curves are the longer
    # runs' first points
    for short, long, writer, count in (("schedule_decay", "schedule_decay_full", "schedule_decay_full", 4 * 2 * 2),
                                       ("schedule_const", "schedule_rmsprop_const", "schedule_rmsprop_const", 2 * 2),
                                       ("zoo", "schedule_decay_full", "zoo", 2 * 2)):
        logs = "".join(p.read_text() for p in (smoke / "logs" / writer).glob("train_shard*.log"))
        taken = [p for p in (smoke / "results/runs" / short).rglob("seed*.json")
                 if str(p.relative_to(smoke)) in logs and str(longer(p, short, long).relative_to(smoke)) in logs]
        assert len(taken) == count, (short, len(taken))
        for path in taken:
            mine, theirs = records.read(path), records.read(longer(path, short, long))
            assert mine["experiment"] == short and mine["steps"] <= min(theirs["steps"], mine["config"]["budget"])
            n = len(mine["curve"]["loss"])
            assert json.dumps(mine["curve"]["loss"]) == json.dumps(theirs["curve"]["loss"][:n]), path
            assert mine["curve"]["step"] == theirs["curve"]["step"][:n]
    assert {r["steps"] for r in map(records.read, (smoke / "results/runs/schedule_decay").rglob("seed*.json"))} != {400}
    assert len(list((smoke / "results/runs/nuclear_reference").glob("seed*.json"))) == 2
    counts = pd.read_csv(smoke / "results/controls/classification.csv")
    assert len(counts) == 3


def test_gaugelab_summarize_gives_each_experiments_summary_byte_for_byte(smoke, tmp_path):
    """Outside Snakemake, `gaugelab summarize` makes the summary job's file from the same records
    (each experiment's own runs and the ones it reads from the zoo, controls.run_sources)."""
    from gaugelab.core import config
    from gaugelab.sensing import controls

    cfg = config.load(str(SMOKE))
    experiments = controls.sensing_experiments(cfg)
    sources = controls.run_sources(experiments, cfg["seeds"], cfg["dtype"])
    # the schedule control's arms have no summary job (its table reads their runs); the opt-in
    # targets' arms (phase_*, signum_audit_*) are not part of the smoke run
    summarized = [name for name in experiments if not name.startswith(("schedule_", "phase_", "signum_audit_"))]
    assert len(summarized) == 5
    for name in summarized:
        paths = [smoke / f"results/runs/{sources[key]}/{key[1]}/lr{float(key[2])!r}/seed{key[3]}.json"
                 for key in sources if key[0] == name]
        out = tmp_path / f"{name}.csv"
        subprocess.run([sys.executable, "-m", "gaugelab.cli", "summarize", "--config", str(SMOKE), "--experiment",
                        name, *map(str, paths), "-o", str(out)], check=True, capture_output=True)
        assert out.read_bytes() == (smoke / f"results/{name}/summary.csv").read_bytes(), name
    zoo = [smoke / f"results/runs/zoo/{m}/lr{float(lr)!r}/seed{s}.json" for (e, m, lr, s) in sources if e == "zoo"]
    other = next(smoke.glob("results/runs/second_size/*/lr*/seed*.json"))  # a run of another experiment
    for paths, problem in ((zoo + [other], f"{other}: "), (zoo[1:], "1 of the experiment's")):
        bad = subprocess.run([sys.executable, "-m", "gaugelab.cli", "summarize", "--config", str(SMOKE),
                              *map(str, paths), "-o", str(tmp_path / "bad.csv")], capture_output=True, text=True)
        assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and problem in bad.stderr, bad.stderr
        assert not (tmp_path / "bad.csv").exists()


def test_gaugelab_table_renders_each_table_as_its_job_does(smoke, tmp_path):
    """`gaugelab table NAME INPUTS -o OUT.tex` outside Snakemake: the table job's LaTeX and HTML,
    byte for byte, from the files the job reads (the reference rows in glob order, not seed order;
    Table 6's runs found among every zoo and schedule-arm record by what determines them)."""
    from gaugelab.paper import table_files
    from gaugelab.core import config
    from gaugelab.sensing import controls

    cfg, r = config.load(str(SMOKE)), smoke / "results"
    arms = [r / controls.init_arm(scale) / "summary.csv" for scale in cfg["init_scale"]["inits"]]
    inputs = {"table2": [r / "zoo/summary.csv", r / "zoo/comparison.csv"],
              "second_size": [r / "second_size/summary.csv"], "lr_sensitivity": [r / "lr_sensitivity/summary.csv"],
              "init_scale": [r / "zoo/summary.csv", *arms],
              "nuclear_reference": sorted((r / "runs/nuclear_reference").glob("seed*.json")),
              "dial": [r / "dial/envelope.csv", r / "dial/fixed_lr.csv"],
              "table6": sorted(r.glob("runs/zoo/*/lr*/seed*.json"))
                        + sorted(r.glob("runs/schedule_*/*/lr*/seed*.json")),
              "table9": sorted(r.glob("runs/table9_step1/*.json")) + sorted(r.glob("runs/table9/**/*.json")),
              "table3": [r / "twins/pairs.csv"], "table3_qk": [r / "twins/pairs.csv"], "d5": [r / "twins/d5.csv"]}
    opt_in = {"phase", "table11", "phase_fine", "dial_gpu"}  # the opt-in targets' tables: their own tests
    assert set(inputs) == set(table_files.COMMANDS) - opt_in
    for name, paths in inputs.items():
        out = tmp_path / f"{name}.tex"
        subprocess.run([sys.executable, "-m", "gaugelab.cli", "table", name, *map(str, paths), "--config",
                        str(SMOKE), "-o", str(out)], check=True, capture_output=True)
        for suffix in (".tex", ".html"):
            assert out.with_suffix(suffix).read_bytes() == (r / f"tables/{name}{suffix}").read_bytes(), name
    wrong = subprocess.run([sys.executable, "-m", "gaugelab.cli", "table", "table2", str(r / "twins/pairs.csv"),
                            "-o", str(tmp_path / "x.tex")], capture_output=True, text=True)
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1 and "table table2" in wrong.stderr, wrong.stderr


def test_the_process_ends_with_its_last_job_under_a_long_timespan(tmp_path):
    """Snakemake's scheduler leaves a re-evaluation timer one `max-jobs-per-timespan` timespan
    ahead whenever ready jobs wait for a core; the Snakefile cancels those left when the run ends.
    Here the zoo's training shards wait for one core under an hour's timespan: without the
    cancellation the process would wait out the hour (subprocess.TimeoutExpired)."""
    snakemake(tmp_path, "--cores", "1", "--max-jobs-per-timespan", "1000/3600s", "results/zoo/summary.csv", timeout=600)
    assert (tmp_path / "results/zoo/summary.csv").exists()


def test_a_running_jobs_log_shows_progress_lines(tmp_path):
    """A real training job started by Snakemake (one twin pair of the smoke model, lengthened so
    that it runs a while): its log shows a progress line from inside the training loop, mid-run,
    while the job is still running (GAUGELAB_PROGRESS_SECONDS shortens the interval)."""
    config = yaml.safe_load(SMOKE.read_text())
    config["twins"].update(steps=20000, checkpoints=[0, 1, 5])
    (tmp_path / "long.yaml").write_text(yaml.safe_dump(config))
    pair = "cpu-mod11-L2d16h2/adam/gauge/init42_seed777"
    cmd = SNAKEMAKE + ["--directory", str(tmp_path), "--configfile", str(tmp_path / "long.yaml"), "--cores", "1",
                       f"results/runs/twins/{pair}.json"]
    logs, seen = tmp_path / "logs/twins/adam", None  # the job of copy 1 (adam, init 42), or its part: init42*.log
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            env={**os.environ, "GAUGELAB_PROGRESS_SECONDS": "0.5"})
    try:
        deadline = time.time() + 240
        while time.time() < deadline and seen is None and proc.poll() is None:
            time.sleep(0.2)
            lines = [line for log in logs.glob("init42*.log") for line in log.read_text().splitlines()]
            seen = next((line for line in lines if line.startswith("progress twins") and "step 0/" not in line), None)
        running = proc.poll() is None and not (tmp_path / f"results/runs/twins/{pair}.json").exists()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    assert seen is not None, f"no mid-run progress line in {logs}/init42*.log"
    assert running, "the job had ended before its progress line was read"
    assert re.fullmatch(r"progress twins .+: 0/\d+ runs done, step [1-9]\d*/20000, \d+ s elapsed, about .+ left", seen)
