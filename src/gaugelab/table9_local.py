"""Table 9's float64 pairs without Snakemake (``gaugelab table9``), one after another in this
process: for debugging one pair, a short run, or a machine without Snakemake.

Running jobs side by side is Snakemake's work, not this module's: ``snakemake gpu --cores N
--resources gpu=K`` runs K of Table 9's full-length jobs at once, each the batched pairs of one
copy 1, with the workflow's record checks and resumption. Each pair here gives the record the
workflow's ``table9_full`` job gives (the same bits: tests/test_suite64.py), written where that
job writes it, so ``snakemake table9`` run in the same folder tabulates it; ``--step1`` writes the
step-1 bundles of ``table9_step1`` instead. A run of another length than the configuration's is
not that record: it goes to :func:`short_run_path`, which no rule reads.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from . import records, suite64, suite64_step1


def short_run_path(model: str, pair, steps: int) -> str:
    """results/runs/table9-short/steps<N>/<model>/...: a run of other than the configured length,
    kept apart from the full-length record the workflow's Table 9 reads (and per length, so an
    existing record is one of the length asked for)."""
    full = suite64.full_run_path(model, pair)
    return full.replace("results/runs/table9/", f"results/runs/table9-short/steps{steps}/", 1)


def plan(models: list[str], pairs: list, *, step1: bool, root: Path, force: bool,
         short: dict[str, int] | None = None) -> list[tuple]:
    """The jobs still to run, as (model, pair or None for a step-1 bundle, output path); models in
    ``short`` (model -> steps, other than the configuration's) go to :func:`short_run_path`."""
    short, jobs = short or {}, []
    for model in models:
        if step1:
            jobs.append((model, None, root / suite64.step1_path(model)))
        elif model in short:
            jobs += [(model, pair, root / short_run_path(model, pair, short[model])) for pair in pairs]
        else:
            jobs += [(model, pair, root / suite64.full_run_path(model, pair)) for pair in pairs]
    return [job for job in jobs if force or not job[2].exists()]


def run_job(model: str, pair, output: Path, settings: dict, *, steps: int | None, pairs: list,
            device: str, threads: int, corpus_path: str | None) -> str:
    """One job: configure torch, train, write the record; return a summary line."""
    cfg, task, dtype, dev = suite64.setup(model, settings, threads=threads, device=device, corpus_path=corpus_path)
    output.parent.mkdir(parents=True, exist_ok=True)
    if pair is None:
        recs = suite64_step1.step1_subset(cfg, task, pairs, settings, dtype=dtype, device=dev, log=lambda line: None)
        suite64.write_bundle(output, recs, suite64.step1_provenance(model, settings, pairs))
        return f"{model} step-1 subset: {len(recs)} pairs, {sum(r['wall_s'] for r in recs):.1f} s on {dev}"
    rec = suite64.train_pair(pair, cfg, task, settings, steps=steps, dtype=dtype, device=dev)
    records.write_json(output, rec)
    return (f"{model} {pair}: {rec['status']}, drift step 1 {rec['curve'][1][1]:.3e}, "
            f"final {rec['curve'][-1][1]:.3e}, {rec['wall_s']:.1f} s on {dev}")


def run(jobs: list[tuple], settings: dict, *, steps: dict, pairs: list, device: str, threads: int,
        corpus_path: str | None, log=print) -> int:
    """Run ``jobs`` in order, logging each as it ends; return the number that failed (a failed job
    leaves no record and does not stop the others)."""
    failed, start = 0, time.perf_counter()
    for model, pair, output in jobs:
        try:
            line = run_job(model, pair, output, settings, steps=steps.get(model), pairs=pairs, device=device,
                           threads=threads, corpus_path=corpus_path)
        except Exception as exc:  # noqa: BLE001 - reported, and the other jobs go on
            failed += 1
            line = f"FAILED {output}: {type(exc).__name__}: {exc}"
        log(f"[{time.perf_counter() - start:7.1f} s] {line}")
        sys.stdout.flush()
    return failed
