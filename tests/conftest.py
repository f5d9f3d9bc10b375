"""Fixtures shared by the workflow, cluster and report tests."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gaugelab import runtime

# The suite runs under the numerics contract, as every job does: checked, and MKL kept on one
# thread in this process (runtime.configure).
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


def pytest_collection_modifyitems(items):
    """A test that uses the smoke run outside SMOKE_USERS would have it made twice: refuse it."""
    strays = sorted({module_of(item.nodeid) for item in items
                     if "smoke" in item.fixturenames and Path(module_of(item.nodeid)).name not in SMOKE_USERS})
    if strays:
        raise pytest.UsageError(f"{', '.join(strays)} use the smoke fixture: "
                                "add them to SMOKE_USERS in tests/conftest.py")


@pytest.fixture(scope="session")
def smoke(tmp_path_factory):
    """One local run of the smoke configuration, shared by every test that compares against it."""
    workdir = tmp_path_factory.mktemp("smoke")
    cmd = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "--directory", str(workdir),
           "--configfile", str(SMOKE), "--cores", "2"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, f"local smoke run failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}"
    return workdir
