"""Table 2 sweep: the engine against a plain-PyTorch loop, on the same work, in one run.

The baseline trains one run at a time the obvious way: ``torch.optim`` where PyTorch has the
rule (SGD, Adam, RMSprop), a minimal ``torch.optim.Optimizer`` written out below where it does
not, the spec's loop and loss. The engine runs the same cells with ``runner.run_batch`` (the whole
sweep as one batch, or one batch per seed with ``--batch seed``). Both use the same thread count.
``--workers N`` also times the engine as the workflow runs it: the sweep dealt into N shards
(``dealing.deal``) trained side by side in N worker processes started from this one, each on
threads/N thread(s), start-up included; their records must equal the one-process engine's.
Prints seconds per method, the ratios, and the largest recovery difference between the engine
and the plain loop on the stable (non-chaotic) methods as a same-work check.

    python benchmarks/bench_sensing.py                 # the full sweep, 1 thread (about 6 min here)
    python benchmarks/bench_sensing.py --threads 2 --workers 2   # two cores (about 7 min here)
    python benchmarks/bench_sensing.py --budget 2000   # a quick look
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor

import torch

from gaugelab.core import config, runtime
from gaugelab.sensing import dealing, runner

CHAOTIC = {"signum", "rmsprop"}  # spec §19: their cells move by ~1e-2 under round-off


class _Simple(torch.optim.Optimizer):
    """Per-parameter rules of the zoo that torch.optim lacks, for the baseline only."""

    def __init__(self, params, lr, kind):
        super().__init__(params, {"lr": lr})
        self.kind, self.t = kind, 0

    @torch.no_grad()
    def step(self):
        self.t += 1
        group = self.param_groups[0]
        lr, params = group["lr"], [p for p in group["params"]]
        if self.kind == "scalar_adam":
            total, count = 0.0, 0
            for p in params:
                st = self.state[p]
                st.setdefault("m", torch.zeros_like(p)).mul_(0.9).add_(p.grad, alpha=0.1)
                st.setdefault("v", torch.zeros_like(p)).mul_(0.999).addcmul_(p.grad, p.grad, value=0.001)
                total += float((st["v"] / (1 - 0.999**self.t)).sum())
                count += p.numel()
            scale = lr / (math.sqrt(total / count) + 1e-8)
            for p in params:
                p.sub_(scale * (self.state[p]["m"] / (1 - 0.9**self.t)))
            return
        for p in params:
            g, st = p.grad, self.state[p]
            if self.kind == "signum":
                m = st.setdefault("m", torch.zeros_like(p)).mul_(0.9).add_(g, alpha=0.1)
                p.sub_(lr * torch.sign(m))
            elif self.kind == "lion":
                m = st.setdefault("m", torch.zeros_like(p))
                c = torch.sign(0.9 * m + 0.1 * g)
                m.mul_(0.99).add_(g, alpha=0.01)
                p.sub_(lr * c)
            elif self.kind == "adafactor":
                r = st.setdefault("r", p.new_zeros(p.shape[0])).mul_(0.999).add_((g * g).mean(1), alpha=0.001)
                c = st.setdefault("c", p.new_zeros(p.shape[1])).mul_(0.999).add_((g * g).mean(0), alpha=0.001)
                vhat = torch.outer(r, c) / (r.mean() + 1e-30)
                p.sub_(lr * g / (vhat.sqrt() + 1e-8))
            elif self.kind == "muon":
                b = st.setdefault("b", torch.zeros_like(p)).mul_(0.9).add_(g)
                x = b / (b.norm() + 1e-7)
                for _ in range(5):
                    s = x @ x.T
                    x = 3.4445 * x + (-4.7750 * s + 2.0315 * s @ s) @ x
                p.sub_(lr * x)
            elif self.kind == "shampoo":
                left = st.setdefault("L", p.new_zeros(p.shape[0], p.shape[0])).add_(g @ g.T)
                right = st.setdefault("R", p.new_zeros(p.shape[1], p.shape[1])).add_(g.T @ g)
                if (self.t - 1) % 20 == 0:
                    st["Li"], st["Ri"] = _root(left), _root(right)
                p.sub_(lr * st["Li"] @ g @ st["Ri"])


def _root(m):
    e, v = torch.linalg.eigh(0.5 * (m + m.T) + torch.eye(m.shape[0]))
    return (v * e.clamp_min(1e-6).pow(-0.25)) @ v.T


def torch_optimizer(method, params, lr):
    if method == "gd":
        return torch.optim.SGD(params, lr=lr)
    if method == "adam":
        return torch.optim.Adam(params, lr=lr, betas=(0.9, 0.999), eps=1e-8)
    if method == "rmsprop":
        return torch.optim.RMSprop(params, lr=lr, alpha=0.99, eps=1e-8)
    return _Simple(params, lr, method)


def plain_run(inst, u0, v0, method, lr, exp):
    """One run, the spec's canonical loop, written plainly."""
    u, v = u0.clone().requires_grad_(True), v0.clone().requires_grad_(True)
    opt = torch_optimizer(method, [u, v], lr)
    budget, decayed = exp["budget"], method in exp["decayed"]
    for t in range(1, budget + 1):
        opt.zero_grad()
        loss = ((inst.A @ (u @ v.T).reshape(-1) - inst.y) ** 2).mean()
        train = float(loss.detach())
        if not math.isfinite(train) or train > 1e8:
            return math.nan
        loss.backward()
        if decayed:
            opt.param_groups[0]["lr"] = lr * 0.5 * (1 + math.cos(math.pi * t / budget))
        opt.step()
        if t % exp["check_every"] == 0 and train < exp["tol"]:
            break
    with torch.no_grad():
        return float(torch.linalg.norm(u @ v.T - inst.X) / torch.linalg.norm(inst.X))


def engine_shard(job: tuple) -> list[dict]:
    """One worker process's shard of the sweep (``--workers``)."""
    exp, cells, threads = job
    return runner.run_batch("zoo", exp, cells, threads=threads)


def engine_in_workers(exp: dict, cells: list, workers: int, threads: int) -> list[dict]:
    """The sweep dealt into ``workers`` shards as the workflow deals its jobs, trained side by
    side in fresh processes (spawned: each imports torch, as a job does); records in cell order."""
    shards = dealing.deal(cells, workers, seed=lambda c: c[1], method=lambda c: c[0])
    jobs = [(exp, shard, max(1, threads // workers)) for shard in shards]
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        done = {(r["method"], r["seed"], r["lr"]): r for part in pool.map(engine_shard, jobs) for r in part}
    return [done[(m, seed, lr)] for m, seed, lr, _ in cells]


def _numbers(record: dict) -> str:
    """A record less where it ran (threads differ), for an exact comparison (nan equals nan)."""
    return repr({k: v for k, v in record.items() if k != "environment"})


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budget", type=int, help="override the step budget (default: the protocol's)")
    ap.add_argument("--methods", nargs="*", help="subset of the zoo (default: all nine)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads, the same for both (default 1)")
    ap.add_argument("--batch", choices=["all", "seed"], default="all",
                    help="the engine's batches: the whole sweep as one (default) or one per seed")
    ap.add_argument("--workers", type=int, default=0,
                    help="also time the engine in this many worker processes, one shard each (default: not)")
    args = ap.parse_args()
    runtime.set_threads(args.threads)
    cfg = config.load()
    exp = dict(cfg["zoo"], **({"budget": args.budget} if args.budget else {}))
    grids = {m: g for m, g in exp["grids"].items() if not args.methods or m in args.methods}

    start = time.perf_counter()
    records = []
    batches = [cfg["seeds"]] if args.batch == "all" else [[seed] for seed in cfg["seeds"]]
    for seeds in batches:
        cells = [(m, seed, lr, 0.0) for seed in seeds for m, g in grids.items() for lr in g]
        records += runner.run_batch("zoo", exp, cells, threads=args.threads)
    engine_s = time.perf_counter() - start
    engine = {(r["method"], r["lr"], r["seed"]): r["rec"] for r in records}

    if args.workers:
        cells = [(m, seed, lr, 0.0) for seed in cfg["seeds"] for m, g in grids.items() for lr in g]
        start = time.perf_counter()
        in_workers = engine_in_workers(exp, cells, args.workers, args.threads)
        workers_s = time.perf_counter() - start
        by_cell = {(r["method"], r["seed"], r["lr"]): r for r in records}
        differ = [c for c, r in zip(cells, in_workers) if _numbers(r) != _numbers(by_cell[c[:3]])]

    plain, plain_s = {}, {}
    for method, grid in grids.items():
        t0 = time.perf_counter()
        for seed in cfg["seeds"]:
            inst, u0, v0 = runner.prepare(exp, seed, "float32", torch.device("cpu"))
            for lr in grid:
                plain[(method, lr, seed)] = plain_run(inst, u0, v0, method, lr, exp)
        plain_s[method] = time.perf_counter() - t0
    total_plain = sum(plain_s.values())

    runs = sum(len(g) for g in grids.values()) * len(cfg["seeds"])
    print(f"Table 2 sweep: {runs} runs, budget {exp['budget']}, {args.threads} thread(s), engine batches: "
          f"{args.batch}, torch {torch.__version__}")
    for method, seconds in plain_s.items():
        print(f"  plain {method:12s} {seconds:7.1f} s")
    print(f"plain PyTorch, one run at a time: {total_plain:7.1f} s")
    print(f"gaugelab engine, batched:         {engine_s:7.1f} s")
    print(f"speed-up: {total_plain / engine_s:.2f}x")
    if args.workers:
        print(f"gaugelab engine, {args.workers} worker processes of {max(1, args.threads // args.workers)} "
              f"thread(s), one shard each: {workers_s:7.1f} s")
        print(f"speed-up, engine in workers: {total_plain / workers_s:.2f}x")
        print(f"records in workers equal to the one-process engine's: "
              f"{'yes' if not differ else f'NO, {len(differ)} differ, e.g. {differ[0]}'}")
    diffs = [abs(engine[k] - plain[k]) for k in engine
             if k[0] not in CHAOTIC and math.isfinite(engine[k]) and math.isfinite(plain[k])]
    print(f"same work: max |rec engine - rec plain| over stable methods = {max(diffs, default=0):.1e}")
    if args.workers and differ:
        raise SystemExit("the engine's records depend on how the runs were grouped: a bug (testbed.Layout)")


if __name__ == "__main__":
    main()
