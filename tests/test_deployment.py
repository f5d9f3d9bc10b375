"""Deployment: the lock files, pyproject.toml's ranges and the env files agree; every rule names
its env and its log; the workflow runs as a module of another workflow (and from another folder
without --configfile: test_workflow.py's dry-run counts); and the SLURM profile turns every job
(GPU-tagged ones included) into a complete sbatch request.
No scheduler is needed here: the requests come from a dry run rendered by the SLURM plugin's own
functions (profiles/slurm/preview.py); test_cluster.py submits them for real."""

import json
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import Version

from conftest import ROOT, SMOKE, rule_directives, write_profile
from gaugelab.core import runtime

ENVS = sorted((ROOT / "envs").glob("*.yaml"))
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
LOCKS = {name: ROOT / "requirements" / name for name in ("cpu.lock", "cuda.lock")}
ENV_LOCK = {"gaugelab.yaml": "cpu.lock", "cluster.yaml": "cpu.lock", "cuda.yaml": "cuda.lock", "audit.yaml": "cpu.lock"}
CPU_INDEX = "https://download.pytorch.org/whl/cpu"
PIN = re.compile(r"^([A-Za-z0-9_.\-]+)(\[[^\]]*\])?==([A-Za-z0-9_.+\-]+)$")
# Exported by every env on activation (envs/*.yaml `variables:`), with the value it must have; the
# portable contract's variables are not among them (the `numerics` key chooses the mode, and
# `import gaugelab` in each job sets them where it is asked for).
DETERMINISM = {"CUBLAS_WORKSPACE_CONFIG": runtime.CUBLAS_SETTING, "PYTHONHASHSEED": "0",
               "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
CONTRACT_ONLY = set(runtime.CONTRACT_ENV) - set(DETERMINISM)


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(requirements, where):
    """name -> version of a list of `name[extras]==version` requirements (pip options such as
    --extra-index-url aside); anything else fails."""
    out = {}
    for req in requirements:
        if req.startswith("--"):
            continue
        match = PIN.match(req.strip())
        assert match, f"{where}: {req!r} is not an exact pin (name==version)"
        out[canonical(match[1])] = match[3]
    return out


def project_requirements():
    """Every requirement of pyproject.toml, runtime and extras, as packaging Requirements."""
    lists = [PYPROJECT["project"]["dependencies"], *PYPROJECT["project"]["optional-dependencies"].values()]
    return [Requirement(r) for requirements in lists for r in requirements]


def lock_entries(path):
    """name -> (version, hashes) of a lock file (pip's requirement format with --hash options)."""
    entries, name = {}, None
    for line in path.read_text().splitlines():
        match = re.match(r"^([A-Za-z0-9_.\-]+)==(\S+)", line)
        if match:
            name = canonical(match[1])
            entries[name] = (match[2], [])
        elif name and line.strip().startswith("--hash=sha256:"):
            entries[name][1].append(line.strip().split(":", 1)[1].rstrip(" \\"))
    return entries


def env_packages(path):
    """(conda pins, pip pins, pip options) of one env file; every entry must be an exact pin."""
    env = yaml.safe_load(path.read_text())
    conda, pip, options = {}, {}, []
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            pip.update(pins(dep["pip"], path.name))
            options += [d for d in dep["pip"] if d.startswith("--")]
        else:
            name, sep, version = dep.partition("=")
            assert sep and version and not re.search(r"[<>=*,|]", version), \
                f"{path.name}: conda dependency {dep!r} is not an exact pin (name=version)"
            conda[canonical(name)] = version
    return conda, pip, options


def test_pyproject_states_compatible_ranges():
    """Ranges, not pins, so the package installs into other environments: each with a lower and
    an upper bound."""
    for req in project_requirements():
        operators = {spec.operator for spec in req.specifier}
        assert "==" not in operators and ">=" in operators and "<" in operators, f"pyproject: {req}"


def test_every_lock_entry_has_a_hash_and_satisfies_the_ranges():
    for path in LOCKS.values():
        entries = lock_entries(path)
        assert len(entries) > 50, f"{path.name}: only {len(entries)} packages: not the whole tree?"
        for name, (_, hashes) in entries.items():
            assert hashes and all(re.fullmatch(r"[0-9a-f]{64}", h) for h in hashes), f"{path.name}: {name} hash"
        for req in project_requirements():
            name = canonical(req.name)
            assert name in entries, f"{path.name} lacks {name}"
            assert req.specifier.contains(Version(entries[name][0]), prereleases=True), \
                f"{path.name}: {name}=={entries[name][0]} is outside pyproject's {req.specifier}"


def test_the_cpu_lock_takes_the_cpu_build_and_the_cuda_lock_the_cuda_build():
    cpu, cuda = lock_entries(LOCKS["cpu.lock"]), lock_entries(LOCKS["cuda.lock"])
    cuda_wheels = [n for n in cpu if n.startswith("nvidia-") or n == "triton"]
    assert not cuda_wheels, f"cpu.lock pulls CUDA wheels: {cuda_wheels}"
    assert cpu["torch"][0].endswith("+cpu") and len(cpu["torch"][1]) >= 1
    assert "+" not in cuda["torch"][0] and "triton" in cuda and any(n.startswith("nvidia-") for n in cuda)
    # the same versions but for torch's build and what it brings
    assert {n: v for n, (v, _) in cpu.items() if n != "torch"}.items() <= {n: v for n, (v, _) in cuda.items()}.items()


def test_env_files_pin_their_locks_closure():
    """Each env file's pip section: its lock's versions, the closure of what it installs (read
    from the installed packages' metadata), and for the CPU envs the PyTorch CPU index."""
    python = SpecifierSet(PYPROJECT["project"]["requires-python"])
    assert set(ENV_LOCK) == {p.name for p in ENVS}
    for path in ENVS:
        conda, pip, options = env_packages(path)
        assert Version(conda["python"]) in python, f"{path.name}: python {conda['python']} vs {python}"
        lock = lock_entries(LOCKS[ENV_LOCK[path.name]])
        for name, version in pip.items():
            assert name in lock and lock[name][0] == version, \
                f"{path.name}: {name}=={version}, {ENV_LOCK[path.name]} says {lock.get(name, ('nothing',))[0]}"
        assert (f"--extra-index-url {CPU_INDEX}" in options) == (ENV_LOCK[path.name] == "cpu.lock"), path.name
        if ENV_LOCK[path.name] == "cpu.lock":  # the installed tree is cpu.lock's
            missing = closure([n for n in pip if n in direct_names()]) - set(pip)
            assert not missing, f"{path.name} lacks {sorted(missing)} (python requirements/lock.py writes them)"


def direct_names():
    return {canonical(r.name) for r in project_requirements()}


def closure(names):
    """Every distribution that installing ``names`` brings, from the installed packages' metadata."""
    todo, seen = list(names), set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for text in metadata.requires(name) or []:
            req = Requirement(text)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(canonical(req.name))
    return seen


def test_installed_packages_are_the_locked_ones():
    """The environment the tests run in is cpu.lock's (.ci/run installs it from scratch)."""
    for name, (version, _) in lock_entries(LOCKS["cpu.lock"]).items():
        assert metadata.version(name) == version, f"{name}: installed {metadata.version(name)}, locked {version}"


def test_every_env_pins_the_deterministic_settings():
    for path in ENVS:
        variables = yaml.safe_load(path.read_text()).get("variables", {})
        for key, value in DETERMINISM.items():
            assert str(variables.get(key)) == value, f"{path.name}: variables.{key} should be {value!r}"
        assert not CONTRACT_ONLY & set(variables), f"{path.name}: sets the portable mode's variables in every mode"


def test_every_rule_names_an_env_and_a_log():
    rules = rule_directives()
    runnable = {name: r for name, r in rules.items() if r["runs"]}
    assert len(runnable) >= 12, sorted(rules)  # every rule file's rules were seen
    runtime_deps = {canonical(Requirement(r).name) for r in PYPROJECT["project"]["dependencies"]} - {"snakemake"}
    for name, rule in runnable.items():
        assert rule["log"], f"rule {name} has no log:"
        assert rule["conda"], f"rule {name} has no conda:"
        env = ROOT / "envs" / rule["conda"].rsplit("/", 1)[-1]
        assert env in ENVS and rule["conda"] == f"../envs/{env.name}", f"rule {name}: conda {rule['conda']!r}"
        conda, pip, _ = env_packages(env)
        missing = runtime_deps - set(pip) - set(conda)
        assert not missing, f"rule {name}: {env.name} lacks {sorted(missing)}"



def test_every_rule_runs_the_script_named_after_it():
    """A rule and its script share a name; a rule generated per experiment, copy or shard adds a
    suffix (twins_run_adam_init42: scripts/twins_run.py); the sensing training shards are named
    <experiment>_train_<shard> (scripts/sensing_train.py). Every script belongs to a rule."""
    scripts = {name: Path(r["script"]).stem for name, r in rule_directives().items() if r["script"]}
    for name, stem in scripts.items():
        generated = name.startswith(stem + "_") or (stem == "sensing_train" and re.fullmatch(r"\w+_train_\d+", name))
        assert name == stem or generated, f"rule {name} runs scripts/{stem}.py"
    unused = {p.stem for p in (ROOT / "scripts").glob("*.py")} - set(scripts.values())
    assert not unused, f"scripts no rule runs: {sorted(unused)}"


def test_every_engine_module_is_small_and_the_readme_two_screens():
    """One job per module (at most ~450 lines each) and a README a user reads in about two
    screens (under 200 lines); the details live in docs/."""
    long = {str(p.relative_to(ROOT)): n for p in (ROOT / "src" / "gaugelab").rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 450}
    assert not long, f"engine modules over 450 lines: {long}"
    assert len((ROOT / "README.md").read_text().splitlines()) < 200


# --- the workflow as a module of another workflow, and from another folder ------------------------

DEPLOYED = """\
configfile: {config!r}


module gaugelab:
    snakefile:
        {snakefile!r}
    config:
        config


use rule * from gaugelab
"""


def job_counts(proc):
    """rule -> jobs, from a dry run's `--quiet rules` table."""
    assert proc.returncode == 0, proc.stderr[-4000:]
    rows = [line.split() for line in (proc.stdout + proc.stderr).splitlines()]
    return {row[0]: int(row[1]) for row in rows if len(row) == 2 and row[1].isdigit()}


@pytest.mark.workflow
def test_the_workflow_runs_as_a_module_of_another_workflow(tmp_path):
    """As the workflow catalog's deployment (snakedeploy) uses it: another workflow, in its own
    folder with its own config, declares this one a module and uses every rule. A dry run of the
    whole default target, then one real job, whose record and log land in that folder."""
    (tmp_path / "Snakefile").write_text(DEPLOYED.format(config=str(SMOKE), snakefile=str(ROOT / "Snakefile")))
    snakemake = [sys.executable, "-m", "snakemake", "--cores", "1"]
    counts = job_counts(subprocess.run(snakemake + ["-n", "--quiet", "rules"], cwd=tmp_path,
                                       check=False, capture_output=True, text=True))
    assert counts["zoo_train_0"] == counts["comparison"] == 1 and counts["dial_train"] == 2, counts
    target = "results/runs/nuclear_reference/seed42.json"
    proc = subprocess.run(snakemake + [target], cwd=tmp_path, check=False, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert json.loads((tmp_path / target).read_text())["seed"] == 42
    assert "progress convex reference" in (tmp_path / "logs/nuclear_reference/seed42.log").read_text()


def test_the_catalog_file_describes_the_usage():
    catalog = yaml.safe_load((ROOT / ".snakemake-workflow-catalog.yml").read_text())
    usage = catalog["usage"]
    assert set(usage) == {"mandatory-flags", "software-stack-deployment", "report"}
    assert set(usage["mandatory-flags"]) == {"desc", "flags"}
    assert set(usage["software-stack-deployment"]) == {"conda", "apptainer", "apptainer+conda"}


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
