"""Deployment: the pinned environments agree with the package metadata, every rule names its env
and its log, and the SLURM profile turns every job (GPU-tagged ones included) into a complete
sbatch request. No scheduler is needed here: the requests come from a dry run rendered by the SLURM
plugin's own functions (profiles/slurm/preview.py); test_cluster.py submits them for real."""

import json
import re
import subprocess
import sys
import tomllib
from importlib import metadata

import pytest
import yaml
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from conftest import ROOT, SMOKE, rule_directives, write_profile
from gaugelab import runtime

ENVS = sorted((ROOT / "envs").glob("*.yaml"))
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
PIN = re.compile(r"^([A-Za-z0-9_.\-]+)(\[[^\]]*\])?==([A-Za-z0-9_.+\-]+)$")
# Exported by every env on activation (envs/*.yaml `variables:`), with the value it must have.
DETERMINISM = {**runtime.CONTRACT_ENV, "PYTHONHASHSEED": "0",
               "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(requirements, where):
    """name -> version of a list of `name[extras]==version` requirements; anything else fails."""
    out = {}
    for req in requirements:
        match = PIN.match(req.strip())
        assert match, f"{where}: {req!r} is not an exact pin (name==version)"
        out[canonical(match[1])] = match[3]
    return out


def project_pins():
    """Every pin of pyproject.toml, runtime and extras; a package pinned twice has one version."""
    lists = {"dependencies": PYPROJECT["project"]["dependencies"],
             **{f"[{k}]": v for k, v in PYPROJECT["project"]["optional-dependencies"].items()}}
    merged = {}
    for where, requirements in lists.items():
        for name, version in pins(requirements, f"pyproject {where}").items():
            assert merged.setdefault(name, version) == version, f"{name} pinned to two versions in pyproject"
    return merged


def env_packages(path):
    """(conda pins, pip pins) of one env file; every entry must be an exact pin."""
    env = yaml.safe_load(path.read_text())
    conda, pip = {}, {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            pip.update(pins(dep["pip"], path.name))
        else:
            name, sep, version = dep.partition("=")
            assert sep and version and not re.search(r"[<>=*,|]", version), \
                f"{path.name}: conda dependency {dep!r} is not an exact pin (name=version)"
            conda[canonical(name)] = version
    return conda, pip


def test_env_pins_agree_with_pyproject():
    project = project_pins()
    python = SpecifierSet(PYPROJECT["project"]["requires-python"])
    assert ENVS, "no envs/*.yaml"
    for path in ENVS:
        conda, pip = env_packages(path)
        assert Version(conda["python"]) in python, f"{path.name}: python {conda['python']} vs {python}"
        for name, version in pip.items():
            assert name in project, f"{path.name}: {name} is not pinned in pyproject.toml"
            assert version == project[name], f"{path.name}: {name}=={version}, pyproject says {project[name]}"


def test_installed_packages_are_the_pinned_ones():
    """The environment the tests run in is the pinned one (CI installs `.[test]` from scratch)."""
    for name, version in project_pins().items():
        installed = Version(metadata.version(name))
        assert installed.public.split("+")[0] == version, f"{name}: installed {installed}, pinned {version}"


def test_every_env_pins_the_deterministic_settings():
    for path in ENVS:
        variables = yaml.safe_load(path.read_text()).get("variables", {})
        for key, value in DETERMINISM.items():
            assert str(variables.get(key)) == value, f"{path.name}: variables.{key} should be {value!r}"


def test_every_rule_names_an_env_and_a_log():
    rules = rule_directives()
    runnable = {name: r for name, r in rules.items() if r["runs"]}
    assert len(runnable) >= 12, sorted(rules)  # every rule file's rules were seen
    runtime_deps = set(pins(PYPROJECT["project"]["dependencies"], "pyproject")) - {"snakemake"}
    for name, rule in runnable.items():
        assert rule["log"], f"rule {name} has no log:"
        assert rule["conda"], f"rule {name} has no conda:"
        env = ROOT / "envs" / rule["conda"].rsplit("/", 1)[-1]
        assert env in ENVS and rule["conda"] == f"../envs/{env.name}", f"rule {name}: conda {rule['conda']!r}"
        conda, pip = env_packages(env)
        missing = runtime_deps - set(pip) - set(conda)
        assert not missing, f"rule {name}: {env.name} lacks {sorted(missing)}"


# --- the SLURM profile, rendered by a dry run -----------------------------------------------------

def preview(tmp_path, *args, profile=None):
    """profiles/slurm/preview.py: one sbatch request per job of a dry run."""
    cmd = [sys.executable, str(ROOT / "profiles/slurm/preview.py"), "-s", str(ROOT / "Snakefile"),
           "--directory", str(tmp_path), *(["--profile", str(profile)] if profile else []), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def sbatch_flags(request):
    return request["sbatch"].split()


def assert_cpu_request(request):
    flags = sbatch_flags(request)
    assert request["partition"] == "cpu" and "-p" in flags and flags[flags.index("-p") + 1] == "cpu", request
    assert not any(f.startswith(("--gpus", "--gres", "--cpus-per-gpu")) for f in flags), request
    assert any(re.fullmatch(r"--cpus-per-task=[1-9]\d*", f) for f in flags), request


def assert_gpu_request(request):
    flags = sbatch_flags(request)
    gpus = request["gpu"]
    assert gpus >= 1 and (f"--gpus={gpus}" in flags or any(f.startswith("--gpus=") and f.endswith(f":{gpus}")
                                                            for f in flags)), request
    assert request["partition"] == "gpu" and flags[flags.index("-p") + 1] == "gpu", request
    assert "--cpus-per-gpu=2" in flags and not any(f.startswith("--cpus-per-task") for f in flags), request


def assert_time_and_memory(request):
    flags = sbatch_flags(request)
    assert flags[flags.index("-t") + 1] == str(request["runtime"]) and int(request["runtime"]) > 0, request
    assert flags[flags.index("--mem") + 1] == str(request["mem_mb"]) and int(request["mem_mb"]) > 0, request


@pytest.mark.workflow
def test_every_job_of_the_default_run_gets_a_complete_sbatch_request(tmp_path):
    requests = preview(tmp_path, "--configfile", str(ROOT / "config.yaml"))
    by_rule = {r["rule"]: r for r in requests}
    assert {"dial_train", "sensing_sensitivity", "table2", "comparison"} <= set(by_rule)
    assert "all" not in by_rule  # target rules run nothing and are not submitted
    for request in requests:
        assert_time_and_memory(request)
        (assert_gpu_request if request["gpu"] else assert_cpu_request)(request)
    # a rule's own resources win over the profile's defaults, which fill in for small jobs
    assert by_rule["dial_train"]["runtime"] == 60 and by_rule["dial_train"]["mem_mb"] == 2000
    assert by_rule["table2"]["runtime"] == 15 and by_rule["table2"]["mem_mb"] == 1000


@pytest.mark.workflow
def test_the_profile_names_only_rules_that_exist():
    """A set-resources entry for a renamed or removed rule would silently do nothing."""
    profile = yaml.safe_load((ROOT / "profiles/slurm/profile.yaml").read_text())
    missing = set(profile.get("set-resources", {})) - set(rule_directives())
    assert not missing, f"profiles/slurm names rules the workflow lacks: {sorted(missing)}"


@pytest.mark.workflow
def test_a_gpu_tagged_rule_gets_a_gpu_request(tmp_path):
    """dial_train tagged gpu=1 stands in for the float64 GPU rules (issue 8), which carry the tag in
    the rule itself: the same resource reaches the plugin either way."""
    profile = write_profile(tmp_path / "profile", {"dial_train": {"gpu": 1}})
    requests = preview(tmp_path / "work", "--configfile", str(SMOKE), profile=profile)
    gpu = [r for r in requests if r["rule"] == "dial_train"]
    assert len(gpu) == 2  # one per seed of the smoke config
    for request in gpu:
        assert_gpu_request(request)
        assert_time_and_memory(request)
        assert request["runtime"] == 60 and request["mem_mb"] == 2000  # the rule's own
    for request in requests:
        if request["rule"] != "dial_train":
            assert_cpu_request(request)


@pytest.mark.workflow
def test_the_gpu_target_gets_gpu_requests(tmp_path):
    """Once the float64 GPU twins exist (issue 8: a `gpu` target whose full-length jobs carry
    resources gpu=1), every one of those jobs must come out as a GPU request."""
    if "gpu" not in rule_directives():
        pytest.skip("no `gpu` target in the workflow yet (issue 8 adds the float64 GPU rules)")
    requests = preview(tmp_path, "gpu", "--configfile", str(ROOT / "config.yaml"))
    gpu = [r for r in requests if r["gpu"]]
    assert gpu, "the gpu target has no job with resources gpu >= 1"
    for request in gpu:
        assert_gpu_request(request)
        assert_time_and_memory(request)
