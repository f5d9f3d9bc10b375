"""Fixtures shared by the workflow, cluster and report tests."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from gaugelab.core import runtime, sealed

# The suite runs as users run the engine: in the numerics mode the environment asks for (native
# unless GAUGELAB_NUMERICS says otherwise), checked (runtime.configure). A test marked `portable`
# states a promise of the portable mode alone (bits that do not depend on the grouping of runs, the
# thread count or the CPU; the reference records): it runs in a child process under that mode
# (portable_outcomes below).
runtime.configure()

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / "tests" / "config" / "smoke.yaml"
SLURM_PROFILE = ROOT / "profiles" / "slurm"


def require(*executables, install):
    """Skip when a system tool is missing, except in CI (CI=true), where .ci/run installs it: fail."""
    missing = [exe for exe in executables if shutil.which(exe) is None]
    if missing:
        message = f"{', '.join(missing)} not installed (Debian: apt-get install {install})"
        if os.environ.get("CI"):
            pytest.fail(f"{message}; .ci/run installs it")
        pytest.skip(message)


def rule_directives():
    """name -> {conda, log, runs, script} of every rule, read from the workflow itself (Snakemake's API)."""
    code = (
        "import json, sys, tempfile\n"
        "from pathlib import Path\n"
        "from snakemake.api import SnakemakeApi\n"
        "from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings\n"
        "with tempfile.TemporaryDirectory() as work, SnakemakeApi(OutputSettings()) as api:\n"
        "    wf = api.workflow(ResourceSettings(), ConfigSettings(configfiles=[Path(sys.argv[2])]),\n"
        "                      snakefile=Path(sys.argv[1]), workdir=Path(work))\n"
        "    rules = {r.name: {'conda': r.conda_env, 'log': list(r.log), 'runs': not r.norun,\n"
        "                      'script': r.script}\n"
        "             for r in wf._workflow.rules}\n"
        "print('RULES ' + json.dumps(rules))\n")
    proc = subprocess.run([sys.executable, "-c", code, str(ROOT / "Snakefile"), str(SMOKE)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    line = next(out for out in proc.stdout.splitlines() if out.startswith("RULES "))
    return json.loads(line[len("RULES "):])


def write_profile(folder, extra_resources=None, **settings):
    """profiles/slurm with test settings added: its set-resources merged per rule (a top-level key
    given again, on the command line or in a second --profile, would replace it whole)."""
    profile = yaml.safe_load((SLURM_PROFILE / "profile.yaml").read_text())
    profile["slurm-partition-config"] = str(SLURM_PROFILE / profile["slurm-partition-config"])
    for rule, resources in (extra_resources or {}).items():
        profile.setdefault("set-resources", {}).setdefault(rule, {}).update(resources)
    profile.update(settings)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "profile.yaml").write_text(yaml.safe_dump(profile))
    return folder


# The suite runs spread over the cores (pytest-xdist, addopts' -n auto). A fixture made once per
# module, or the session's smoke run, would be made again on a second worker: each module's tests
# go to one worker, and these modules, the ones that use the smoke run, all to the same one.
SMOKE_USERS = {"test_workflow.py", "test_probes_records.py", "test_report_browser.py", "test_cluster.py"}


def module_of(nodeid):
    return nodeid.split("::")[0]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """One unit of work per module, the smoke run's users together: xdist's loadscope
    scheduling with its scope of a test redefined, as its own loadfile scheduling does (xdist's
    --dist loadgroup would say as much with marks, but on pytest 9.2 it loses them:
    pytest-xdist issue 1386)."""
    from xdist.scheduler import LoadScopeScheduling

    class ByModule(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            module = module_of(nodeid)
            return "the smoke run" if Path(module).name in SMOKE_USERS else module

    return ByModule(config, log)


# --- tests of the portable mode's promises, run under it -----------------------------------------
# The mode is fixed when torch starts, so a process runs one mode. A `portable` test in a process
# of the other mode is run in a child process under numerics: portable, with every other selected
# `portable` test of its module (one child per module); the child writes each test's outcome to
# the file OUTCOMES names, and the test here reports it.
OUTCOMES = "GAUGELAB_TEST_OUTCOMES"
PORTABLE_SELECTED = {}  # module -> node ids of the selected portable tests, in order
PORTABLE_OUTCOMES = {}  # module -> {node id: (outcome, text)}


@pytest.hookimpl(trylast=True)  # after -m and -k have deselected
def pytest_collection_modifyitems(items):
    """A test that uses the smoke run outside SMOKE_USERS would have it made twice: refuse it.
    The selected portable tests of each module, for its child process."""
    strays = sorted({module_of(item.nodeid) for item in items
                     if "smoke" in item.fixturenames and Path(module_of(item.nodeid)).name not in SMOKE_USERS})
    if strays:
        raise pytest.UsageError(f"{', '.join(strays)} use the smoke fixture: "
                                "add them to SMOKE_USERS in tests/conftest.py")
    for item in items:
        if item.get_closest_marker("portable"):
            PORTABLE_SELECTED.setdefault(module_of(item.nodeid), []).append(item.nodeid)


def pytest_runtest_logreport(report):
    """In a child process: each test's outcome, for the parent (portable_outcomes)."""
    path = os.environ.get(OUTCOMES)
    if path and (report.when == "call" or report.outcome != "passed"):
        with open(path, "a") as out:
            text = report.longrepr[2] if report.skipped and isinstance(report.longrepr, tuple) else report.longreprtext
            out.write(json.dumps({"nodeid": report.nodeid, "outcome": report.outcome, "text": text}) + "\n")


def portable_outcomes(module):
    """node id -> (outcome, text) of the module's selected portable tests, run once in a child
    process under the portable mode."""
    if module not in PORTABLE_OUTCOMES:
        with tempfile.TemporaryDirectory() as folder:
            results = Path(folder) / "outcomes.jsonl"
            env = {**os.environ, runtime.MODE_VARIABLE: runtime.PORTABLE, OUTCOMES: str(results)}
            proc = subprocess.run([sys.executable, "-m", "pytest", *PORTABLE_SELECTED[module], "-o", "addopts=",
                                   "-p", "no:cacheprovider", "-q", "-m", "portable"],
                                  capture_output=True, text=True, env=env, cwd=ROOT)
            lines = results.read_text().splitlines() if results.exists() else []
        found = {}
        for line in lines:
            entry = json.loads(line)
            old = found.get(entry["nodeid"], ("passed", ""))
            found[entry["nodeid"]] = old if old[0] == "failed" else (entry["outcome"], entry["text"])
        missing = (f"no outcome from the child process (exit {proc.returncode}):\n"
                   f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        PORTABLE_OUTCOMES[module] = {nodeid: found.get(nodeid, ("failed", missing))
                                     for nodeid in PORTABLE_SELECTED[module]}
    return PORTABLE_OUTCOMES[module]


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem):
    """A `portable` test in a native process: its outcome under the portable mode."""
    if pyfuncitem.get_closest_marker("portable") is None or runtime.mode() == runtime.PORTABLE:
        return None
    why = runtime.portable_unavailable()
    if why:
        pytest.skip(f"the portable mode cannot hold here: {why}")
    outcome, text = portable_outcomes(module_of(pyfuncitem.nodeid))[pyfuncitem.nodeid]
    if outcome == "skipped":
        pytest.skip(f"under the portable mode: {text}")
    if outcome != "passed":
        pytest.fail(f"under the portable mode (a child process):\n{text}", pytrace=False)
    return True


@pytest.fixture(autouse=True)
def _nothing_made_from(monkeypatch):
    """Each test starts with no inputs named for its seals (sealed.made_from is per process: a job)."""
    monkeypatch.setattr(sealed, "_made_from", ())


def snakemake_smoke(workdir, *args):
    """Snakemake on the smoke configuration in ``workdir``, as a user types it; the finished process."""
    cmd = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "--directory", str(workdir), *args,
           "--configfile", str(SMOKE)]
    return subprocess.run(cmd, capture_output=True, text=True)


@pytest.fixture(scope="session")
def smoke(tmp_path_factory):
    """One local run of the smoke configuration, shared by every test that compares against it."""
    workdir = tmp_path_factory.mktemp("smoke")
    cmd = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "--directory", str(workdir),
           "--configfile", str(SMOKE), "--cores", "2"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, f"local smoke run failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return workdir
