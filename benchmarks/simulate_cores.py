"""The wall time of a finished run's jobs on more cores, simulated from what each job took.

Reads a finished run folder (as ``time_workflow.sh`` leaves it): each job's start, end, rule,
inputs and outputs from Snakemake's own metadata (``.snakemake/metadata/``), and its threads from
the run's log. Then it replays the jobs' dependency graph on N cores: a job starts when every job
that made one of its inputs has ended and enough cores are free, the ready job with the longest
chain of work still behind it first (what `priority:` on the longest chains asks of Snakemake), and
it takes the time it took in the measured run. For each N it prints the simulated wall time beside
its two lower bounds: the longest chain of jobs and the total job time over N.

A job's time is its wall time in the measured run, Snakemake's start-up of the job included. On a
loaded machine (two jobs side by side on two vCPUs) that is longer than the job alone would take,
so the figures for more cores err on the long side. Snakemake's benchmark files sample CPU time
only every 30 s, which is why the wall time is used.

    python benchmarks/simulate_cores.py RUN_FOLDER [--log RUN_FOLDER/../snakemake.log] [--cores 2 4 8 16 32]
"""

from __future__ import annotations

import argparse
import base64
import heapq
import json
import re
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Job:
    rule: str
    outputs: list[str]
    inputs: list[str]
    seconds: float
    threads: int = 1
    after: set[int] = field(default_factory=set)  # the jobs it waits for


def read_jobs(run: Path) -> list[Job]:
    """One job per Snakemake job hash of the run's metadata, its outputs gathered."""
    by_hash: dict[int, Job] = {}
    folder = run / ".snakemake" / "metadata"
    for entry in sorted(p for p in folder.rglob("*") if p.is_file()):
        meta = json.loads(entry.read_text())
        # the output's path, urlsafe base64, cut into folders named "@<part>" where it is long
        name = "".join(part.removeprefix("@") for part in entry.relative_to(folder).parts)
        output = base64.urlsafe_b64decode(name).decode()
        if meta.get("incomplete") or meta.get("starttime") is None or meta.get("endtime") is None:
            continue
        job = by_hash.setdefault(meta["job_hash"], Job(meta["rule"], [], list(meta.get("input", [])),
                                                         meta["endtime"] - meta["starttime"]))
        job.outputs.append(output)
    return list(by_hash.values())


def read_threads(log: Path) -> dict[str, int]:
    """output path -> threads of its job, from the run's log (Snakemake prints `threads: N` in a
    job's block when N > 1)."""
    threads: dict[str, int] = {}
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", log.read_text()):
        found = re.search(r"^\s+threads: (\d+)", block, re.MULTILINE)
        outputs = re.search(r"^\s+output: (.+)$", block, re.MULTILINE)
        if found and outputs:
            for path in outputs[1].split(", "):
                threads[path.strip()] = int(found[1])
    return threads


def link(jobs: list[Job], threads: dict[str, int]) -> None:
    maker = {path: i for i, job in enumerate(jobs) for path in job.outputs}
    for job in jobs:
        job.after = {maker[path] for path in job.inputs if path in maker}
        job.threads = max((threads.get(path, 1) for path in job.outputs), default=1)


def chains(jobs: list[Job]) -> list[float]:
    """For each job, its time plus the longest chain of jobs that wait for it."""
    waiting: dict[int, list[int]] = {i: [] for i in range(len(jobs))}
    for i, job in enumerate(jobs):
        for j in job.after:
            waiting[j].append(i)
    memo: dict[int, float] = {}

    def tail(i: int) -> float:
        if i not in memo:
            memo[i] = jobs[i].seconds + max((tail(k) for k in waiting[i]), default=0.0)
        return memo[i]

    return [tail(i) for i in range(len(jobs))]


def simulate(jobs: list[Job], cores: int) -> float:
    """The wall time of the jobs on ``cores`` cores, longest chain first (see the module's text)."""
    rank = chains(jobs)
    left = {i: len(job.after) for i, job in enumerate(jobs)}
    waiting: dict[int, list[int]] = {i: [] for i in range(len(jobs))}
    for i, job in enumerate(jobs):
        for j in job.after:
            waiting[j].append(i)
    ready = [(-rank[i], i) for i, n in left.items() if n == 0]
    heapq.heapify(ready)
    running: list[tuple[float, int]] = []  # (end, job)
    now, free = 0.0, cores
    while ready or running:
        held = []
        while ready:
            priority, i = heapq.heappop(ready)
            need = min(jobs[i].threads, cores)
            if need <= free:
                free -= need
                heapq.heappush(running, (now + jobs[i].seconds, i))
            else:
                held.append((priority, i))
        for item in held:
            heapq.heappush(ready, item)
        now, i = heapq.heappop(running)
        free += min(jobs[i].threads, cores)
        for k in waiting[i]:
            left[k] -= 1
            if left[k] == 0:
                heapq.heappush(ready, (-rank[k], k))
    return now


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a finished run folder (time_workflow.sh's repo)")
    parser.add_argument("--log", type=Path, help="the run's Snakemake log (default: RUN/../snakemake.log)")
    parser.add_argument("--cores", type=int, nargs="+", default=[2, 4, 8, 16, 32])
    args = parser.parse_args()
    jobs = read_jobs(args.run)
    log = args.log or args.run.parent / "snakemake.log"
    link(jobs, read_threads(log) if log.exists() else {})
    total = sum(job.seconds * job.threads for job in jobs)
    longest = max(chains(jobs), default=0.0)
    top = sorted(jobs, key=lambda job: -job.seconds)[:5]
    print(f"{len(jobs)} jobs, {total:.0f} core-s of job time; the longest chain {longest:.0f} s; the longest jobs: "
          + ", ".join(f"{job.rule} {job.outputs[0]} {job.seconds:.0f} s" for job in top))
    print(f"{'cores':>5} {'simulated s':>12} {'min':>6} {'chain s':>8} {'work/cores s':>13}")
    for cores in args.cores:
        wall = simulate(jobs, cores)
        print(f"{cores:>5} {wall:>12.0f} {wall / 60:>6.1f} {longest:>8.0f} {total / cores:>13.0f}")


if __name__ == "__main__":
    main()
