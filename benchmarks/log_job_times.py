"""Each job's wall time from a Snakemake log: the stamp before its start (a "Job N: <message>" line,
or a "rule <name>:" block with "jobid: N") to the stamp before its "Finished jobid: N (Rule: <name>)".
For revisions whose rules write no benchmark file, so that a before/after pair of
`time_workflow.sh` runs can be compared job by job (one-second resolution).

    python benchmarks/log_job_times.py snakemake.log
"""

import re
import sys
from collections import defaultdict
from datetime import datetime

STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
RULE = re.compile(r"^(?:local)?(?:rule|checkpoint) (\w+):$")
JOBID = re.compile(r"^\s+jobid: (\d+)$")
JOB = re.compile(r"^Job (\d+): ")
FINISHED = re.compile(r"^Finished jobid: (\d+) \(Rule: (\w+)\)")


def job_times(lines):
    """{jobid: (rule, seconds)} for every job the log shows starting and finishing."""
    started, done = {}, {}
    stamp = rule = None
    for line in lines:
        line = line.rstrip("\n")
        if m := STAMP.match(line):
            stamp = datetime.strptime(m[1], "%a %b %d %H:%M:%S %Y")
        elif m := RULE.match(line):
            rule = m[1]
        elif (m := JOBID.match(line)) and rule is not None:
            started[m[1]], rule = stamp, None
        elif m := JOB.match(line):
            started[m[1]] = stamp
        elif (m := FINISHED.match(line)) and m[1] in started:
            done[m[1]] = (m[2], (stamp - started[m[1]]).total_seconds())
    return done


def main(path):
    with open(path) as fh:
        times = job_times(fh)
    per_rule = defaultdict(lambda: [0, 0.0])
    for rule, seconds in times.values():
        per_rule[rule][0] += 1
        per_rule[rule][1] += seconds
    for rule, (n, seconds) in sorted(per_rule.items(), key=lambda kv: -kv[1][1]):
        print(f"  rule {rule:<36} {n:3d} jobs {seconds:9.0f} s wall")
    print(f"  all rules {len(times):3d} jobs {sum(s for _, s in times.values()):9.0f} s wall")


if __name__ == "__main__":
    main(sys.argv[1])
