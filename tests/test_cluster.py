"""The smoke configuration through a real SLURM, with the user-facing profile profiles/slurm.

A single-node SLURM (Debian's slurm-wlm + munge; tests/cluster/local_slurm.sh) is started for this
module and stopped afterwards. Snakemake submits every job with sbatch through
snakemake-executor-plugin-slurm; the test checks that every job of the DAG was submitted and
completed, that each record was computed inside a SLURM job the scheduler knows, that a GPU-tagged
rule was sent to the gpu partition with a GPU allocated, and that every output equals the local
run's (the `smoke` fixture): records but for the job id, everything else byte for byte.
"""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, SMOKE, require, rule_directives, write_profile

pytestmark = pytest.mark.cluster

LOCAL_SLURM = ROOT / "tests" / "cluster" / "local_slurm.sh"
# Settings for a cluster without an accounting database (the plugin's default status command,
# sacct, needs one; squeue sees finished jobs for MinJobAge = 300 s), and a first status check
# after 1 s instead of 40. Test-only: the user-facing profile is left as a real site needs it.
NO_ACCOUNTING = {"slurm-status-command": "squeue", "slurm-no-account": True,
                 "slurm-init-seconds-before-status-checks": 1}


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    """A running single-node SLURM; yields the environment that points clients at it."""
    require("munged", "slurmctld", "slurmd", "sbatch", "squeue", install="slurm-wlm munge")
    if os.geteuid() != 0:
        pytest.skip("the local SLURM runs its daemons as root")
    state = tmp_path_factory.mktemp("slurm")
    start = time.monotonic()
    proc = subprocess.run(["bash", str(LOCAL_SLURM), "start", str(state)], capture_output=True, text=True)
    if proc.returncode != 0:
        subprocess.run(["bash", str(LOCAL_SLURM), "stop", str(state)])  # whatever did start
        pytest.fail(f"SLURM did not start:\n{proc.stdout}\n{proc.stderr}")
    print(f"\nSLURM started in {time.monotonic() - start:.1f} s")
    yield {**os.environ, "SLURM_CONF": str(state / "slurm.conf")}
    pids = {name: (state / f"{name}.pid").read_text().strip() for name in ("munged", "slurmctld", "slurmd")
            if (state / f"{name}.pid").exists()}
    subprocess.run(["bash", str(LOCAL_SLURM), "stop", str(state)], check=True)
    alive = [name for name, pid in pids.items() if Path(f"/proc/{pid}").exists()]
    assert not alive, f"daemons still running after stop: {alive}"


# Sections 5 and 7 of the smoke configuration: training shards, perturbed reruns, summaries,
# tables, figures and comparison parts, about 15 jobs of every kind the workflow has. (The whole
# smoke DAG, about 70 jobs, pays Snakemake's start-up inside every job: minutes more on 2 cores.)
TARGETS = ["results/tables/table2.html", "results/figures/figure1.png", "results/tables/dial.html",
           "results/figures/dial.png", "results/dial/comparison.csv"]


def scheduler_jobs(env):
    """Every job slurmctld still knows (finished ones included): id -> partition, state, GPUs."""
    out = subprocess.run(["squeue", "--states=all", "--noheader", "-O",
                          "JobID:12,Partition:12,State:14,tres-per-job:30"],
                         capture_output=True, text=True, env=env, check=True).stdout
    return {line.split()[0]: {"partition": line.split()[1], "state": line.split()[2], "tres": line.split()[3]}
            for line in out.splitlines() if line.strip()}


def strip_job_id(node, ids):
    """The record with environment.slurm_job_id removed (collected into ids): the one field a
    SLURM run adds; and so without the payload digest, which covers it."""
    if isinstance(node, dict):
        env = node.get("environment")
        if isinstance(env, dict) and "slurm_job_id" in env:
            ids.append(env["slurm_job_id"])
            node = {**node, "environment": {k: v for k, v in env.items() if k != "slurm_job_id"}}
        return {k: strip_job_id(v, ids) for k, v in node.items() if k != "digest"}
    if isinstance(node, list):
        return [strip_job_id(v, ids) for v in node]
    return node


def test_smoke_run_through_slurm_equals_the_local_run(slurm, smoke, tmp_path):
    # dial_train stands in for the GPU rules (table9_full's full-length runs are too long for a
    # test): tagged gpu=1 here, it must be routed to the gpu partition and get a GPU (the test node
    # declares one; its jobs still run on the CPU).
    profile = write_profile(tmp_path / "profile", {"dial_train": {"gpu": 1}}, **NO_ACCOUNTING)
    work = tmp_path / "work"
    cmd = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "--directory", str(work),
           "--configfile", str(SMOKE), "--profile", str(profile), *TARGETS]
    # how long the SLURM part takes: this test's line among the slowest durations of CI's log
    proc = subprocess.run(cmd, capture_output=True, text=True, env=slurm, timeout=1200)
    assert proc.returncode == 0, f"SLURM run failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-6000:]}"

    log = proc.stdout + proc.stderr
    submitted = log.count("has been submitted with SLURM jobid")
    runnable = {name for name, rule in rule_directives().items() if rule["runs"]}
    stats = dict(re.findall(r"^(\w+)\s+(\d+)$", log[log.index("Job stats:"):], re.M))
    expected = sum(int(n) for rule, n in stats.items() if rule in runnable)
    assert submitted == expected > 10, f"{submitted} jobs submitted, the DAG has {expected} to run: {stats}"
    jobs = scheduler_jobs(slurm)
    assert len(jobs) == submitted and all(job["state"] == "COMPLETED" for job in jobs.values()), jobs

    slurm_files = sorted(p.relative_to(work) for p in (work / "results").rglob("*") if p.is_file())
    assert {str(t) for t in TARGETS} <= {str(p) for p in slurm_files}
    record_jobs = {}
    for rel in slurm_files:
        ours, theirs = (work / rel).read_bytes(), (smoke / rel).read_bytes()
        ids = []
        if rel.suffix == ".json":  # records: equal but for the SLURM job id they carry
            assert strip_job_id(json.loads(ours), ids) == strip_job_id(json.loads(theirs), []), \
                f"{rel} differs from the local run"
        else:  # tables, CSVs, figures: byte for byte
            assert ours == theirs, f"{rel} differs from the local run"
        if rel.parts[1] == "runs" and json.loads(ours).get("records") != []:  # an empty bundle holds no run
            assert ids, f"{rel} was not computed inside a SLURM job"
            record_jobs[rel] = set(ids)

    for rel, ids in record_jobs.items():
        for job_id in ids:
            assert job_id in jobs, f"{rel}: job {job_id} unknown to the scheduler"
            job = jobs[job_id]
            if rel.parts[2] == "dial" and rel.name.startswith("seed"):  # dial training (its reruns: CPU)
                assert job["partition"] == "gpu" and job["tres"] == "gres:gpu:1", (rel, job)
            else:
                assert job["partition"] == "cpu" and job["tres"] == "N/A", (rel, job)
    dial_jobs = {i for rel, ids in record_jobs.items() if rel.parts[2] == "dial" and rel.name.startswith("seed")
                 for i in ids}
    assert len(dial_jobs) == 2  # one GPU job per seed
