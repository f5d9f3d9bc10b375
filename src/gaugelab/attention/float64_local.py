"""Table 9's float64 pairs without Snakemake (``gaugelab table9``), one job after another in
this process: for a GPU machine without Snakemake, debugging one pair, or a short run.

A job is what the workflow's ``table9_full`` job is: the pairs of one configuration, each copy 1
once beside copy 2 of every pair that shares it, in the device's batches
(``float64_train.train_pairs``). Only the pairs whose record is missing are trained (all with
``--force``); on a GPU, where a record's last bits depend on its batch, a job that trains fewer
pairs than the workflow's does makes records that differ from the workflow's in those bits. Each
record is written where that job writes it, so ``snakemake table9`` run in the same folder
tabulates it; ``--step1`` writes the step-1 bundles of ``table9_step1`` instead. A run of another
length than the configuration's is not that record: it goes to :func:`short_run_path`, which no
rule reads. ``snakemake gpu`` runs the same jobs with the workflow's record checks and resumption.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from . import float64, float64_step1, float64_train, harness
from ..core import records


def short_run_path(model: str, pair, steps: int) -> str:
    """results/runs/table9-short/steps<N>/<model>/...: a run of other than the configured length,
    kept apart from the full-length record the workflow's Table 9 reads (and per length, so an
    existing record is one of the length asked for)."""
    full = float64.full_run_path(model, pair)
    return full.replace("results/runs/table9/", f"results/runs/table9-short/steps{steps}/", 1)


def plan(models: list[str], pairs: list, *, step1: bool, root: Path, force: bool,
         short: dict[str, int] | None = None) -> list[tuple]:
    """The jobs still to run, as (model, pairs, output paths): a configuration's pairs whose
    records are missing (every pair with ``force``), or (model, None, [bundle]) for a step-1
    bundle. Models in ``short`` (model -> steps, other than the configuration's) write to
    :func:`short_run_path`."""
    short, jobs = short or {}, []

    def path(model: str, pair) -> Path:
        return root / (short_run_path(model, pair, short[model]) if model in short
                       else float64.full_run_path(model, pair))

    for model in models:
        if step1:
            bundle = root / float64.step1_path(model)
            jobs += [(model, None, [bundle])] if force or not bundle.exists() else []
            continue
        todo = [p for p in pairs if force or not path(model, p).exists()]
        jobs += [(model, todo, [path(model, p) for p in todo])] if todo else []
    return jobs


def run_job(model: str, pairs: list | None, outputs: list[Path], settings: dict, *, steps: int | None,
            all_pairs: list, device: str, threads: int, corpus_path: str | None, log=print) -> None:
    """One job: configure torch, train, write each record as its pair ends (``log`` a line each)."""
    cfg, task, dtype, dev = float64.setup(model, settings, threads=threads, device=device, corpus_path=corpus_path)
    for output in outputs:
        output.parent.mkdir(parents=True, exist_ok=True)
    if pairs is None:
        recs = float64_step1.step1_subset(cfg, task, all_pairs, settings, dtype=dtype, device=dev,
                                          log=lambda line: None)
        float64.write_bundle(outputs[0], recs, float64.step1_provenance(model, settings, all_pairs))
        log(f"{model} step-1 subset: {len(recs)} pairs, {sum(r['wall_s'] for r in recs):.1f} s on {dev}")
        return
    paths = dict(zip(pairs, outputs))

    def done(pair, rec):
        records.write_json(paths[pair], rec)
        log(f"{model} {pair} on {dev}: {harness.summary(rec)}")  # the workflow job's line

    float64_train.train_pairs(pairs, cfg, task, settings, steps=steps, dtype=dtype, device=dev,
                              max_copies=settings["max_copies"], log=done)


def run(jobs: list[tuple], settings: dict, *, steps: dict, pairs: list, device: str, threads: int,
        corpus_path: str | None, log=print) -> int:
    """Run ``jobs`` in order, logging each pair as it ends; return the number of jobs that failed
    (a failed job leaves the records of the pairs it finished and does not stop the others)."""
    failed, start = 0, time.perf_counter()
    stamped = lambda line: (log(f"[{time.perf_counter() - start:7.1f} s] {line}"), sys.stdout.flush())
    for model, group, outputs in jobs:
        try:
            run_job(model, group, outputs, settings, steps=steps.get(model), all_pairs=pairs, device=device,
                    threads=threads, corpus_path=corpus_path, log=stamped)
        except Exception as exc:  # noqa: BLE001 - reported, and the other jobs go on
            failed += 1
            stamped(f"FAILED {model} {[str(p) for p in group or []] or 'step-1 subset'}: {type(exc).__name__}: {exc}")
    return failed
