"""Snakemake in this process, then its own CPU time: the scheduler's threads included, the jobs
(child processes) not. What a run costs beside its jobs, on the cores the jobs share.

    python benchmarks/snakemake_cpu.py --cores 2 [SNAKEMAKE ARGS...]

The last line of standard error reads ``snakemake's own CPU: user U s, system S s, wall W s``.
"""

import atexit
import resource
import sys
import time

start = time.perf_counter()


def report() -> None:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    sys.__stderr__.write(f"snakemake's own CPU: user {usage.ru_utime:.1f} s, system {usage.ru_stime:.1f} s, "
                         f"wall {time.perf_counter() - start:.1f} s\n")


atexit.register(report)  # after the interpreter has joined Snakemake's threads
sys.argv = ["snakemake", *sys.argv[1:]]
from snakemake.cli import main  # noqa: E402

main()
