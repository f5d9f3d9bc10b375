"""The seconds each training job took in a measured run, for the jobs' messages.

Reads the Snakemake benchmark files of a finished run (its ``logs/benchmarks/``, as
``time_workflow.sh`` leaves them) and prints one row per rule and key: the longest wall time of
that rule's jobs with that key (a sensing experiment's shards, a dial or nuclear seed, a Table 9
configuration, a twin job's copy 1). ``--write`` merges the rows into
``benchmarks/job_times.csv`` (the rows of jobs the run did not have stay), which
``rules/common.smk`` reads for each training job's message.

    python benchmarks/job_times.py /tmp/tmp.XXXX/repo [--write]
"""

from __future__ import annotations

import argparse
import csv
import datetime
import os
import re
import subprocess
from pathlib import Path

CSV = Path(__file__).with_name("job_times.csv")
FIELDS = ["rule", "key", "seconds", "machine", "run"]

# A benchmark file's path under logs/benchmarks (without .tsv) -> (rule, key) of the job's message.
PATTERNS = [
    (r"twins/(?P<optimizer>[a-z_]+)/init(?P<init>\d+(?:_part\d+)?)",
     lambda m: ("twins_run", f"{m['optimizer']}_init{m['init']}")),
    (r"table9/step1/(?P<model>[^/]+)/(?P<copy1>[a-z_]+_init\d+)", lambda m: ("table9_step1", m["model"])),
    (r"table9/step0/(?P<model>[^/]+)/init\d+", lambda m: ("table9_step0", m["model"])),
    (r"table9/full/(?P<model>.+)", lambda m: ("table9_full", m["model"])),
    (r"dial/train_seed\d+", lambda m: ("dial_train", "")),
    (r"nuclear_reference/seed\d+", lambda m: ("nuclear_reference_run", "")),
    (r"diagnose/runs", lambda m: ("diagnose_runs", "")),
    (r"census/(?P<library>.+)", lambda m: ("census_library", m["library"])),
    (r"(?P<experiment>[a-z0-9_]+)/sensitivity_shard\d+", lambda m: ("sensing_sensitivity", "")),
    (r"(?P<experiment>[a-z0-9_]+)/sensitivity_ensemble_shard\d+", lambda m: ("sensing_ensemble", "")),
    (r"(?P<experiment>[a-z0-9_]+)/train_shard\d+", lambda m: ("sensing_train", m["experiment"])),
]


def rule_of(job: str) -> tuple[str, str]:
    for pattern, key in PATTERNS:
        match = re.fullmatch(pattern, job)
        if match:
            return key(match)
    raise SystemExit(f"job_times.py: no rule known for the benchmark file {job}.tsv")


def machine() -> str:
    """'2-core AMD EPYC': the cores this process may use and the CPU's model name (lscpu)."""
    model = subprocess.run(["lscpu"], capture_output=True, text=True, check=True).stdout
    name = next((line.split(":", 1)[1].strip() for line in model.splitlines() if line.startswith("Model name")), "CPU")
    return f"{len(os.sched_getaffinity(0))}-core {name}"


def measure(run: Path, commit: str | None = None) -> list[dict]:
    """The rows of a finished run: the longest wall time per (rule, key), in whole seconds.
    ``commit``: the revision the run was made from (default: the run folder's git HEAD)."""
    bench = run / "logs" / "benchmarks"
    files = sorted(bench.rglob("*.tsv"))
    if not files:
        raise SystemExit(f"job_times.py: no benchmark files under {bench}")
    longest: dict[tuple[str, str], list[float]] = {}
    for path in files:
        rows = list(csv.DictReader(path.read_text().splitlines(), delimiter="\t"))
        longest.setdefault(rule_of(str(path.relative_to(bench).with_suffix(""))), []).append(float(rows[-1]["s"]))
    commit = commit or subprocess.run(["git", "-C", str(run), "rev-parse", "--short", "HEAD"], capture_output=True,
                                      text=True, check=True).stdout.strip()
    when = datetime.date.fromtimestamp(max(p.stat().st_mtime for p in files)).isoformat()
    return [{"rule": rule, "key": key, "seconds": round(max(times)), "machine": machine(),
             "run": f"{commit}, {when}" + (f": the longest of {len(times)} jobs" if len(times) > 1 else "")}
            for (rule, key), times in sorted(longest.items())]


def merge(rows: list[dict], path: Path = CSV) -> None:
    kept = list(csv.DictReader(path.read_text().splitlines())) if path.exists() else []
    new = {(r["rule"], r["key"]) for r in rows}
    merged = sorted([r for r in kept if (r["rule"], r["key"]) not in new] + rows, key=lambda r: (r["rule"], r["key"]))
    with path.open("w", newline="") as out:
        writer = csv.DictWriter(out, FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(merged)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run", type=Path, help="the finished run's folder (with logs/benchmarks/)")
    parser.add_argument("--write", action="store_true", help="merge the rows into --csv")
    parser.add_argument("--csv", type=Path, default=CSV, help=f"the file --write merges into (default: {CSV.name})")
    parser.add_argument("--commit", help="the revision the run was made from (default: the run folder's git HEAD)")
    args = parser.parse_args()
    rows = measure(args.run, args.commit)
    for r in rows:
        print(f"{r['rule']:<24} {r['key']:<28} {r['seconds']:>7} s   {r['machine']}, {r['run']}")
    if args.write:
        merge(rows, args.csv)
        print(f"merged into {args.csv}")


if __name__ == "__main__":
    main()
