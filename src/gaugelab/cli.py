"""``gaugelab``: run one cell outside Snakemake (debugging, notebooks)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import configuration, optim
from .arguments import (UsageError, config_file, finite_float, output_path, positive_float, positive_int, seed,
                        unit_interval, writable_folder)
from .attention import configs
from .attention.pairs import Pair
from .core import records, runtime, sealed
from .core.config import ConfigError, yaml_problem
from .optim import cards
from .paper import table_files
from .sensing import controls, runner
from .tools import symmetries


def _sensing(args: argparse.Namespace) -> int:
    """One run of any sensing experiment the workflow runs: the zoo, a control's arm, or the dial
    (an Adam-p variant: --method adam_p --p P --convention C, labelled as the dial labels it)."""
    from .sensing import dial

    output_path(args.output)
    cfg = config_file(args.config)
    experiments = {**controls.sensing_experiments(cfg), "dial": cfg["dial"]}
    if args.experiment not in experiments:
        raise UsageError(f"no sensing experiment {args.experiment!r}; known: {', '.join(experiments)}")
    if args.method != cards.ADAM_P and (args.p is not None or args.convention is not None):
        raise UsageError("--p and --convention set an Adam-p variant: they need --method adam_p")
    exp = dict(experiments[args.experiment])
    for key in ("n", "rank", "width", "budget", "init", "tol"):
        if getattr(args, key) is not None:
            exp[key] = getattr(args, key)
    if args.schedule is not None:
        others = [m for m in exp.get("decayed", []) if m != args.method]
        exp["decayed"] = others + ([args.method] if args.schedule == "cosine" else [])
    # every sensing experiment has the zoo block's schema and rules; the dial has its own block
    device = args.device or cfg["device"]
    configuration.validate({"dial" if args.experiment == "dial" else "zoo": exp, "device": device})
    method, rules = args.method, None
    if args.method == cards.ADAM_P:  # the dial's variant rule, under the dial's label (p1, rms_p0.5, ...)
        p, convention = 1.0 if args.p is None else args.p, args.convention or "rms"
        method = dial.label(p, convention)
        rules = {method: optim.adam_p(p, convention)}
    record, = runner.run_cells(args.experiment, exp, method, args.seed, [args.lr], rules=rules,
                               perturbations=[args.perturbation], dtype=args.dtype or cfg["dtype"],
                               device=device, threads=args.threads)
    records.write_json(args.output, record)
    print(f"{method} lr={args.lr:g} seed={args.seed}: {record['status']} after {record['steps']} steps, "
          f"rec={record['rec']:.4f} erank={record['erank']:.2f} train={record['train']:.2e} -> {args.output}")
    return 0


def _summarize(args: argparse.Namespace) -> int:
    """A sensing experiment's summary CSV from its run records, as the workflow's summary job
    makes it; the records must be the experiment's runs, every one, made with its settings."""
    from .sensing import select

    output_path(args.output)
    cfg = config_file(args.config)
    experiments = controls.sensing_experiments(cfg)
    if args.experiment not in experiments:
        raise UsageError(f"no sensing experiment {args.experiment!r}; known: {', '.join(experiments)}")
    exp = experiments[args.experiment]
    try:
        runs = controls.experiment_records(args.records, exp, cfg["seeds"], cfg["dtype"], only=True)
    except records.RecordError as exc:
        raise UsageError(f"experiment {args.experiment!r}: {exc}") from None
    summary = select.summary(runs, exp["grids"], exp["selection"], exp["tol"])
    sealed.made_from(args.records)
    records.write_table(summary, args.output)
    print(summary[summary["selected"]].to_string())
    return 0


def _table(args: argparse.Namespace) -> int:
    """A table from the files its workflow job reads, rendered as that job renders it:
    the LaTeX at -o, the HTML beside it."""
    command = table_files.COMMANDS[args.name]
    tex, html = Path(args.output), Path(args.output).with_suffix(".html")
    if tex.suffix != ".tex":
        raise UsageError(f"-o {args.output}: name the LaTeX file (.tex); the HTML goes beside it")
    for path in (tex, html):
        output_path(str(path))
    cfg = config_file(args.config)
    if not command.count(len(args.inputs), cfg):
        raise UsageError(f"table {args.name} reads {command.inputs}; given {len(args.inputs)} file(s)")
    for path in args.inputs:
        if not Path(path).is_file():
            raise UsageError(f"{path}: no such file")
    try:
        texts = command.render(args.inputs, cfg)
    except records.RecordError as exc:
        raise UsageError(str(exc)) from None
    except KeyError as exc:  # a column or field the table needs is not in the file given
        raise UsageError(f"table {args.name} reads {command.inputs}; the files given have no {exc}") from None
    sealed.made_from(args.inputs)
    sealed.write(tex, texts[0])  # sealed as the workflow's products (gaugelab.core.sealed)
    sealed.write(html, texts[1])
    print(f"table {args.name} -> {tex}, {html}")
    return 0


def _options(items: list[str] | None) -> dict:
    """--option KEY=VALUE (repeatable; the value read as YAML) as keyword arguments."""
    import yaml

    options = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--option takes KEY=VALUE, got {item!r}")
        try:
            options[key] = yaml.safe_load(value)
        except yaml.YAMLError as exc:
            raise UsageError(f"--option {item}: the value is not YAML ({yaml_problem(exc)})") from None
    return options


def _diagnose(args: argparse.Namespace) -> int:
    from .tools import diagnose

    options = _options(args.option)
    configuration.validate({"diagnose": {"steps": args.steps, "lr": args.lr, "dtype": args.dtype}})
    output = args.output or f"diagnose_{diagnose.label_of(args.optimizer)}.json"
    output_path(output)
    result = diagnose.run_all(args.optimizer, diagnose.testbeds_of(args.testbed), steps=args.steps, lr=args.lr,
                              dtype=args.dtype, sigma=args.sigma, options=options, threads=args.threads)
    stem = None if args.no_figure else output.removesuffix(".json")
    diagnose.write(result, output, stem)
    for report in result["reports"].values():
        print(diagnose.format_line(report))
    print(f"-> {output}" + ("" if stem is None else f", {stem}.<testbed>.pdf/.png"))
    verdicts = {r["verdict"] for r in result["reports"].values()}
    return 1 if args.expect and verdicts != {args.expect} else 0


def _audit(args: argparse.Namespace) -> int:
    import re

    from .tools import audit, diagnose

    options = _options(args.option)
    label = re.sub(r"[^A-Za-z0-9_.-]", "_", args.model.replace(":", "_"))
    output = args.output or f"audit_{label}_{diagnose.label_of(args.optimizer)}.json"
    output_path(output)
    record = audit.audit(args.model, args.optimizer, steps=args.steps, lr=args.lr, dtype=args.dtype, options=options,
                         sigma=args.sigma, threads=args.threads, only=args.symmetry)
    records.write_json(output, record)
    for line in audit.format_lines(record):
        print(line)
    print(f"-> {output}")
    return 0


def _twins(args: argparse.Namespace) -> int:
    from .attention import twins

    output_path(args.output)
    cfg = config_file(args.config)
    settings = dict(cfg["twins"])
    if args.steps is not None:  # a shorter run: the configured checkpoints it reaches
        settings["steps"] = args.steps
        settings["checkpoints"] = [c for c in settings["checkpoints"] if c <= args.steps]
    for name in ("lr", "lr_aux"):
        if getattr(args, name) is not None:
            settings[name] = {**settings["lr"], args.optimizer: args.lr} if name == "lr" else args.lr_aux
    configuration.validate({"twins": settings})
    try:
        pair = Pair.of(args.optimizer, args.twin, args.init_seed, args.twin_seed, args.sigma or 0.0)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    record = twins.train_pair(pair, settings, threads=args.threads)
    records.write_json(args.output, record)
    steps = "  ".join(f"{s}: {d:.2e}" for s, d, _, _ in record["curve"])
    print(f"{pair}: {record['status']}; drift {steps}; QK drift {record['curve'][-1][2]:.2e} "
          f"({record['wall_s']:.0f} s) -> {args.output}")
    return 0


TABLE9_CONFIGS = list(configs.CONFIGS)  # Table 9's configurations, in its block order


def _table9(args: argparse.Namespace) -> int:
    from .attention import float64_local

    settings = dict(config_file(args.config)["table9"])
    models = args.model or settings["configs"]
    if args.step1 and args.steps is not None:
        raise UsageError("--steps does not apply to --step1 (the subset is steps 0 and 1)")
    if configs.TEXT in models and not args.corpus:
        raise UsageError(f"{configs.TEXT} needs --corpus (the tiny-Shakespeare input.txt)")
    if args.corpus and not Path(args.corpus).is_file():
        raise UsageError(f"--corpus {args.corpus}: no such file")
    if args.corpus:
        from .attention import corpus

        try:
            corpus.verify(args.corpus)
        except corpus.CorpusError as exc:
            raise UsageError(f"--corpus {args.corpus}: {exc}") from None
    writable_folder(Path(args.root), "--root", args.root)
    pairs = [p for p in Pair.listed(settings["pairs"])
             if (not args.optimizer or p.optimizer in args.optimizer) and (not args.twin or p.twin in args.twin)]
    full = settings["steps"]
    steps = {m: args.steps if args.steps is not None else full[m] for m in models}
    # the schema's ceiling on steps; a device this machine has
    device_key = "step1_device" if args.step1 else "device"
    configuration.validate({"table9": {**settings, "steps": {**full, **steps}, device_key: args.device}})
    short = {m: s for m, s in steps.items() if s != full[m]}  # not the workflow's record: elsewhere
    jobs = float64_local.plan(models, pairs, step1=args.step1, root=Path(args.root), force=args.force, short=short)
    print(f"{len(jobs)} job(s), one after another on {args.device}", flush=True)
    failed = float64_local.run(jobs, settings, steps=steps, pairs=pairs, device=args.device, threads=args.threads,
                              corpus_path=args.corpus)
    return 1 if failed else 0


def _triplet_options(sub: argparse.ArgumentParser, *, steps: int, lr: float | None, lr_help: str) -> None:
    """The twin triplet's options, shared by ``diagnose`` and ``audit``."""
    sub.add_argument("--steps", type=positive_int, default=steps, help=f"training steps per copy (default {steps})")
    sub.add_argument("--lr", type=positive_float, default=lr, help=lr_help)
    sub.add_argument("--dtype", choices=["float32", "float64"], default="float64")
    sub.add_argument("--option", action="append", metavar="KEY=VALUE",
                     help="optimizer keyword argument (value read as YAML), repeatable")
    sub.add_argument("--sigma", type=positive_float,
                     help="noise twin's relative perturbation (default: sqrt(eps) of --dtype)")
    sub.add_argument("--threads", type=positive_int, default=1, help="torch threads (default 1)")


def parser() -> argparse.ArgumentParser:
    # One block of declarations per command; blocks of the same shape declare different options.
    top = argparse.ArgumentParser(prog="gaugelab", description=__doc__)
    sub = top.add_subparsers(dest="command", required=True)
    s = sub.add_parser("sensing", help="one matrix-sensing run (method, lr, seed) -> one JSON record")
    s.add_argument("--method", required=True, choices=sorted(optim.REGISTRY))
    s.add_argument("--lr", required=True, type=positive_float)
    s.add_argument("--seed", required=True, type=seed)
    s.add_argument("-o", "--output", required=True, help="record path (JSON)")
    s.add_argument("--config", help="YAML config (default: the paper's protocol)")
    s.add_argument("--experiment", default="zoo",
                   help="sensing experiment: zoo, an arm of a control (second_size, schedule_decay_full, ...) or dial")
    s.add_argument("--budget", type=positive_int, help="step budget T (also the cosine horizon)")
    s.add_argument("--init", type=positive_float, help="factor initialisation scale")
    s.add_argument("--n", type=positive_int, help="target size n")
    s.add_argument("--rank", type=positive_int, help="planted rank")
    s.add_argument("--width", type=positive_int, help="factor width k")
    s.add_argument("--tol", type=positive_float, help="interpolation bar")
    s.add_argument("--schedule", choices=["const", "cosine"], help="override the method's schedule")
    s.add_argument("--p", type=unit_interval, help="Adam-p exponent (--method adam_p; default 1, stock Adam)")
    s.add_argument("--convention", choices=["rms", "geo"],
                   help="Adam-p's shared scalar below p = 1 (--method adam_p; default rms, the paper's)")
    s.add_argument("--perturbation", type=finite_float, default=0.0, help="scale U0 by (1 + this)")
    s.add_argument("--dtype", choices=["float32", "float64"])
    s.add_argument("--device", choices=["auto", "cpu", "cuda"])
    s.add_argument("--threads", type=positive_int, help="torch threads")
    s.set_defaults(func=_sensing)
    m = sub.add_parser("summarize",
                       help="a sensing experiment's run records -> its summary CSV (seed means, selection)")
    m.add_argument("records", nargs="+", help="the experiment's run records (JSON), every one")
    m.add_argument("-o", "--output", required=True, help="summary path (CSV, with a .sha256 beside it)")
    m.add_argument("--config", help="YAML config (default: the paper's protocol)")
    m.add_argument("--experiment", default="zoo", help="sensing experiment: zoo or an arm of a control")
    m.set_defaults(func=_summarize)
    b = sub.add_parser("table", help="a summary table from the files its workflow job reads -> LaTeX and HTML")
    b.add_argument("name", choices=list(table_files.COMMANDS), help="the table (inputs: docs/cli.md)")
    b.add_argument("inputs", nargs="+", help="the files the table's workflow job reads, in its order")
    b.add_argument("-o", "--output", required=True, help="LaTeX path (.tex); the HTML is written beside it")
    b.add_argument("--config", help="YAML config, for the tolerances and grids (default: the paper's protocol)")
    b.set_defaults(func=_table)
    d = sub.add_parser("diagnose", help="put an optimizer through the twin triplet (gauge, A=I, noise) -> verdict",
                       description="Verdicts and thresholds: see docs/diagnose.md and the docstring of "
                                   "gaugelab.tools.diagnose.verdicts.")
    d.add_argument("--optimizer", required=True,
                   help="a registry name (adam, muon, ...) or package.module:Attr (a torch.optim.Optimizer "
                        "subclass, a factory returning one, or a gaugelab.optim.Rule)")
    d.add_argument("--testbed", default="sensing", help="sensing, attention or both (default: sensing)")
    _triplet_options(d, steps=100, lr=1e-2, lr_help="learning rate (default 1e-2)")
    d.add_argument("-o", "--output", help="JSON report (default diagnose_<label>.json); figures beside it")
    d.add_argument("--no-figure", action="store_true", help="write the JSON report only")
    d.add_argument("--expect", choices=["equivariant", "basis-dependent", "chaotic", "determinism failure",
                                        "inconclusive"], help="exit 1 unless every testbed gets this verdict")
    d.set_defaults(func=_diagnose)
    # audit opens as diagnose does (a parser, its description, --optimizer): the same form, its own texts.
    a = sub.add_parser("audit", help="find a model's gauge symmetries and put an optimizer through the triplet on each",
                       description="Model SPEC, verdicts and thresholds: see docs/audit.md and gaugelab.tools.audit.")
    a.add_argument("--model", required=True,
                   help="a built-in (mha, mha-biased, encoder, gpt2, llama, lora) or package.module:factory "
                        "returning (model, batch[, loss_fn])")
    a.add_argument("--optimizer", required=True, help="as for diagnose: a registry name or package.module:Attr")
    _triplet_options(a, steps=50, lr=None, lr_help="learning rate (default: the optimizer's own)")
    a.add_argument("--symmetry", action="append", choices=symmetries.NAMES,
                   help="only this candidate symmetry (one the model has), repeatable")
    a.add_argument("-o", "--output", help="JSON record (default audit_<model>_<optimizer label>.json)")
    a.set_defaults(func=_audit)
    t = sub.add_parser("twins", help="one attention twin pair (Section 6) -> one JSON record")
    t.add_argument("--optimizer", required=True, choices=cards.twin_optimizers())
    t.add_argument("--twin", required=True, choices=["gauge", "identity", "noise"])
    t.add_argument("--init-seed", required=True, type=seed,
                   help="torch.manual_seed before the model is built")
    t.add_argument("--twin-seed", type=seed,
                   help="gauge draw seed (gauge twins; default 888 noise, 0 identity)")
    t.add_argument("--sigma", type=positive_float, help="noise scale on W_Q, W_K (noise twins)")
    t.add_argument("-o", "--output", required=True, help="record path (JSON)")
    t.add_argument("--steps", type=positive_int,
                   help="training steps (default: the config's, 1500); checkpoints past it are left out")
    t.add_argument("--lr", type=positive_float, help="learning rate of --optimizer (default: the protocol's)")
    t.add_argument("--lr-aux", type=positive_float, help="Muon hybrid: Adam's lr on the non-matrix parameters")
    t.add_argument("--config", help="YAML config (default: the paper's protocol)")
    t.add_argument("--threads", type=positive_int, default=1, help="torch threads (default 1)")
    t.set_defaults(func=_twins)
    g = sub.add_parser("table9", help="Table 9's float64 pairs without Snakemake, one job after another",
                       description="A job is one configuration's pairs, batched as the workflow's table9_full "
                                   "job batches them; only pairs without a record are trained. "
                                   "Writes each record where that job (or, with --step1, "
                                   "table9_step1) writes it, under --root; `snakemake table9` there tabulates them. "
                                   "That path is reserved for full-length records: a run whose --steps differs from "
                                   "the configuration's table9.steps goes to results/runs/table9-short/steps<N>/"
                                   "<model>/... instead, which no rule reads. "
                                   "Records already present are kept unless --force. The same jobs with the "
                                   "workflow's record checks and resumption: `snakemake gpu`.")
    g.add_argument("--model", action="append", choices=TABLE9_CONFIGS,
                   help="configuration, repeatable (default: the config's table9.configs), run in this order")
    g.add_argument("--optimizer", action="append", choices=cards.twin_optimizers(),
                   help="only these optimizers' pairs, repeatable")
    g.add_argument("--twin", action="append", choices=["gauge", "identity", "noise"],
                   help="only these twins, repeatable")
    g.add_argument("--step1", action="store_true", help="the step-1 subset (one bundle per configuration) instead")
    g.add_argument("--steps", type=positive_int,
                   help="steps per pair (default: the configuration's); another length goes to "
                        "results/runs/table9-short/")
    g.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto")
    g.add_argument("--threads", type=positive_int, default=1, help="torch threads (default 1)")
    g.add_argument("--corpus", help="tiny-Shakespeare input.txt (checked against its sha256), for the char-LM")
    g.add_argument("--root", default=".", help="the workflow folder the records go under (default .)")
    g.add_argument("--force", action="store_true", help="rerun pairs whose record exists")
    g.add_argument("--config", help="YAML config (default: the paper's protocol)")
    g.set_defaults(func=_table9)
    return top


def main(argv: list[str] | None = None) -> int:
    """Run a subcommand. A user error is one line on stderr, ``gaugelab: <message>``, and exit
    status 2, never a traceback: argparse's and :class:`UsageError` leave through SystemExit, a
    configuration, numerics-contract or diagnostic error returns 2."""
    from .tools.diagnose import DiagnoseError

    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except UsageError as exc:
        print(f"gaugelab: {exc}", file=sys.stderr)
        raise
    except ConfigError as exc:
        print(f"gaugelab: {exc.heading}: {'; '.join(exc.errors)}", file=sys.stderr)
        return 2
    except (runtime.NumericsError, DiagnoseError) as exc:
        print(f"gaugelab: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
