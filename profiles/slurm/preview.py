"""The sbatch request each job would get, without submitting anything.

    python profiles/slurm/preview.py [snakemake arguments]        # e.g. gpu, --config seeds='[42]'

Runs Snakemake's own dry run with this profile, so every job's resources are resolved exactly as in
a real run (the rule's resources, default-resources, set-resources, command-line overrides), then
renders them with snakemake-executor-plugin-slurm's own functions: the partition chosen from
partitions.yaml, --gpus/--gres, --mem, -t, --cpus-per-task or --cpus-per-gpu. Prints one JSON
object per job on stdout (Snakemake's dry-run output goes to stderr). The plugin prints the same
line at submission with `--verbose` ("sbatch call: ..."); check it after upgrading the plugin.
"""

import contextlib
import json
import logging
import sys
from pathlib import Path
from types import SimpleNamespace

from snakemake import cli
from snakemake.logging import logger
from snakemake_executor_plugin_slurm.partitions import get_best_partition, read_partition_file
from snakemake_executor_plugin_slurm.submit_string import get_submit_command
from snakemake_executor_plugin_slurm.utils import set_gres_string
from snakemake_interface_logger_plugins.common import LogEvent

PROFILE = Path(__file__).resolve().parent


def dry_run_jobs(argv):
    """Snakemake's dry run with this profile; the JOB_INFO log records of its jobs."""
    jobs = []

    def keep(record):
        # a job with no output (a target rule such as `all`) runs nothing and is not submitted
        if getattr(record, "event", None) == LogEvent.JOB_INFO and record.output:
            jobs.append(record)
        return True

    logger.addFilter(keep)  # a filter, not a handler: Snakemake replaces the handlers at start-up
    try:
        with contextlib.redirect_stdout(sys.stderr):
            parser, args = cli.parse_args(["--profile", str(PROFILE), "--dry-run", *argv])
            ok = cli.args_to_api(args, parser)
    finally:
        logger.removeFilter(keep)
    if not ok:
        raise SystemExit("preview: the dry run failed (Snakemake's message is above)")
    return jobs, args


def sbatch_request(record, partitions):
    """The plugin's sbatch line for one job, less the --wrap'ed job command."""
    job = SimpleNamespace(name=record.rule_name, resources=record.resources, threads=record.threads,
                          is_group=lambda: False)
    partition = job.resources.get("slurm_partition") or get_best_partition(partitions, job, logger)
    account = job.resources.get("slurm_account")
    params = {"run_uuid": "<run-uuid>", "slurm_logfile": f".snakemake/slurm_logs/rule_{job.name}/%j.log",
              "comment_str": f"rule_{job.name}", "account": f" -A {account}" if account else "",
              "partition": f" -p {partition}" if partition else "", "workdir": None}
    call = get_submit_command(job, params) + set_gres_string(job)
    return {"rule": job.name, "jobid": record.jobid, "wildcards": dict(record.wildcards or {}),
            "partition": partition, "gpu": job.resources.get("gpu", 0),
            "mem_mb": job.resources.get("mem_mb"), "runtime": job.resources.get("runtime"),
            "sbatch": call}


def main(argv):
    jobs, args = dry_run_jobs(argv)
    partition_file = getattr(args, "slurm_partition_config", None)
    partitions = read_partition_file(Path(partition_file)) if partition_file else []
    for record in jobs:
        print(json.dumps(sbatch_request(record, partitions)))


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    main(sys.argv[1:])
