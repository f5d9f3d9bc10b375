"""Table 9's float64 pairs: what a training step costs as one batched program of B copies.

A full-length Table 9 job (``float64_train.train_pairs``) advances each copy 1 and copy 2 of every
pair that shares it as one batched program. This measures, per configuration and on the device at
hand, the seconds of one step (forward, written-out loss, backward, update) of B copies of the
init-42 model under Adam (``--program``: also the job's own program, every optimizer's block of
runs), so that the batch is chosen by measurement, and prints what a pair costs at full length
alone (B = 2) and in a batch of B (B − 1 pairs share copy 1) beside the paper's H100 figure per
Adam pair. A job's time is its steps at the measured pace plus its
checkpoint evaluations (one validation forward of the B copies each), timed apart.

``--check-steps N`` also trains three Adam gauge pairs of each configuration for N steps twice,
as one batch (train_batch) and one by one (train_pair), and says whether their records agree bit
for bit: on the CPU the tests hold them equal; on a GPU the libraries may pick other kernels for
other batch sizes, and this says whether they did.

    python benchmarks/bench_table9.py --model f64-mod47-L2d64h4 --steps 5 --batch 1 2   # a quick CPU look
    python benchmarks/bench_table9.py --device cuda --corpus input.txt --program --check-steps 20
"""

from __future__ import annotations

import argparse
import functools
import json
import time

import torch

from gaugelab.attention import float64, float64_train
from gaugelab.core import config
from gaugelab.attention import configs
from gaugelab.attention.pairs import Pair, by_base

# The paper's seconds per Adam pair on one H100 (its released timings; attention.md §14 gives
# the per-configuration totals).
H100_PAIR_S = {"f64-mod47-L2d64h4": 17, "f64-mod97-L4d128h8": 39, "f64-mod97-L6d256h8": 84, "f64-text-L6d256h8": 87}


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def seconds_per_step(cfg, task, settings, base, parts: list[tuple], steps: int, warmup: int, device):
    """Mean seconds of one step of copies of ``base`` updated by ``parts`` ((optimizer, lr, copies)
    per block of runs, as float64.Copy takes them), and of one validation forward."""
    batch = sum(n for _, _, n in parts)
    params = {k: torch.cat([v.detach()] * batch).contiguous() for k, v in base.items()}
    copies = float64.Copy(params, cfg, settings=settings, parts=parts)
    for step in range(1, warmup + 1):
        copies.try_step(*task.batch(step))
    synchronize(device)
    start = time.perf_counter()
    for step in range(warmup + 1, warmup + steps + 1):
        if copies.try_step(*task.batch(step)) is None:
            raise RuntimeError(f"{cfg.name}: a non-finite loss at step {step}")
    synchronize(device)
    per_step = (time.perf_counter() - start) / steps
    start = time.perf_counter()
    float64.logits(copies.params, cfg, task.x_val)
    synchronize(device)
    return per_step, time.perf_counter() - start


def check_batched(cfg, task, settings, steps: int, dtype, device) -> tuple[bool, list[str]]:
    """Three Adam gauge pairs of init 42, batched and one by one: equal records (wall time and
    environment aside)?"""
    pairs = [Pair.of("adam", "gauge", 42, seed) for seed in (777, 888, 999)]
    batched = float64_train.train_batch(pairs, cfg, task, settings, steps=steps, dtype=dtype, device=device)
    alone = [float64_train.train_pair(p, cfg, task, settings, steps=steps, dtype=dtype, device=device) for p in pairs]
    strip = lambda r: {k: v for k, v in r.items() if k not in ("wall_s", "env", "environment")}
    text = lambda r: json.dumps(strip(r), sort_keys=True)
    same = [text(a) == text(b) for a, b in zip(batched, alone)]
    finals = [f"{b['curve'][-1][1]:.17g}/{a['curve'][-1][1]:.17g}" for a, b in zip(alone, batched)]
    return all(same), finals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", choices=list(configs.CONFIGS), help="configuration (default: all)")
    parser.add_argument("--batch", type=int, nargs="+", default=[1, 2, 4, 7, 12, 23], help="copies per program")
    parser.add_argument("--steps", type=int, default=10, help="timed steps per batch size")
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--optimizer", default="adam", help="the optimizer of the batch-size rows")
    parser.add_argument("--program", action="store_true",
                        help="also time the full-length job's program: the configuration's 18 pairs, 23 copies, "
                             "each copy 1's block under its own optimizer (row 'all')")
    parser.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--corpus", help="tiny-Shakespeare input.txt, for the char-LM")
    parser.add_argument("--check-steps", type=int, default=0, help="also compare batched and one-by-one records")
    args = parser.parse_args()
    settings = config.load()["table9"]
    models = args.model or [m for m in configs.CONFIGS if args.corpus or m != configs.TEXT]
    print(f"{'configuration':<14} {'B':>3} {'s/step':>9} {'s/copy-step':>11} {'eval s':>7} {'job s':>8} "
          f"{'s per pair':>10} {'H100 s per pair':>15}", flush=True)
    for model in models:
        cfg, task, dtype, device = float64.setup(model, settings, threads=args.threads, device=args.device,
                                                 corpus_path=args.corpus)
        base = float64.initial_params(cfg, 42, dtype, device)
        full = configs.STEPS[model]
        evals = len(float64.checkpoints(full))
        lr = functools.partial(float64.learning_rate, settings, cfg)  # of an optimizer
        # each batch size under --optimizer, then the job's own program: every copy 1 of the
        # configuration's pairs with its twins, each block under its optimizer ("all")
        runs = [(str(b), [(args.optimizer, lr(args.optimizer), b)]) for b in args.batch]
        if args.program:
            groups = by_base(Pair.listed(settings["pairs"]))
            runs.append(("all", [(optimizer, lr(optimizer), 1 + len(g)) for (optimizer, _), g in groups.items()]))
        for label, parts in runs:
            batch = sum(n for _, _, n in parts)
            step_s, eval_s = seconds_per_step(cfg, task, settings, base, parts, args.steps, args.warmup, device)
            job = full * step_s + evals * eval_s  # a full-length job of this many copies
            pairs = batch - len(parts)  # each block is a copy 1 and its twins
            per_pair = f"{job / pairs:10.1f}" if pairs else f"{'-':>10}"  # B = 2: a pair alone
            print(f"{configs.SHORT[model]:<14} {label:>3} {step_s:9.4f} {step_s / batch:11.5f} {eval_s:7.3f} "
                  f"{job:8.1f} {per_pair} {H100_PAIR_S[model]:>15}", flush=True)
        if args.check_steps:
            same, finals = check_batched(cfg, task, settings, args.check_steps, dtype, device)
            print(f"{configs.SHORT[model]}: {args.check_steps} steps, batched records "
                  f"{'equal' if same else 'DIFFER from'} one-by-one, bit for bit (final drift alone/batched: "
                  f"{', '.join(finals)})", flush=True)


if __name__ == "__main__":
    main()
