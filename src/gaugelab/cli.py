"""``gaugelab``: run one cell outside Snakemake (debugging, notebooks)."""

from __future__ import annotations

import argparse
import sys

from . import config as configuration
from . import optim, records, runner


def _sensing(args: argparse.Namespace) -> int:
    cfg = configuration.load(args.config)
    if args.experiment not in cfg or not isinstance(cfg[args.experiment], dict) or "grids" not in cfg[args.experiment]:
        raise SystemExit(f"gaugelab: no sensing experiment {args.experiment!r} in the config")
    exp = dict(cfg[args.experiment])
    for key in ("n", "rank", "width", "budget", "init", "tol"):
        if getattr(args, key) is not None:
            exp[key] = getattr(args, key)
    if args.schedule is not None:
        others = [m for m in exp["decayed"] if m != args.method]
        exp["decayed"] = others + ([args.method] if args.schedule == "cosine" else [])
    configuration.validate({args.experiment: exp})
    if args.lr <= 0:
        raise SystemExit(f"gaugelab: --lr must be positive, got {args.lr}")
    record, = runner.run_cells(args.experiment, exp, args.method, args.seed, [args.lr],
                               perturbations=[args.perturbation], dtype=args.dtype or cfg["dtype"],
                               device=args.device or cfg["device"], threads=args.threads)
    records.write_json(args.output, record)
    print(f"{args.method} lr={args.lr:g} seed={args.seed}: {record['status']} after {record['steps']} steps, "
          f"rec={record['rec']:.4f} erank={record['erank']:.2f} train={record['train']:.2e} -> {args.output}")
    return 0


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="gaugelab", description=__doc__)
    sub = top.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sensing", help="one matrix-sensing run (method, lr, seed) -> one JSON record")
    s.add_argument("--method", required=True, choices=sorted(optim.REGISTRY))
    s.add_argument("--lr", required=True, type=float)
    s.add_argument("--seed", required=True, type=int)
    s.add_argument("-o", "--output", required=True, help="record path (JSON)")
    s.add_argument("--config", help="YAML config (default: the paper's protocol)")
    s.add_argument("--experiment", default="zoo", help="sensing experiment block of the config")
    s.add_argument("--budget", type=int, help="step budget T (also the cosine horizon)")
    s.add_argument("--init", type=float, help="factor initialisation scale")
    s.add_argument("--n", type=int, help="target size n")
    s.add_argument("--rank", type=int, help="planted rank")
    s.add_argument("--width", type=int, help="factor width k")
    s.add_argument("--tol", type=float, help="interpolation bar")
    s.add_argument("--schedule", choices=["const", "cosine"], help="override the method's schedule")
    s.add_argument("--perturbation", type=float, default=0.0, help="scale U0 by (1 + this)")
    s.add_argument("--dtype", choices=["float32", "float64"])
    s.add_argument("--device", choices=["auto", "cpu", "cuda"])
    s.add_argument("--threads", type=int, help="torch threads")
    s.set_defaults(func=_sensing)
    return top


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except configuration.ConfigError as exc:
        print(f"gaugelab: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
