"""The whole configuration check: the schema and its cross-field rules (:mod:`gaugelab.core.config`)
and the rules that need the experiments themselves, which core, below them, cannot import: two
values that name the same outputs, a control method outside the ladder's grids, and the
diagnostic's optimizers built once. The workflow and the
command line validate here; ``core.config.validate`` alone fills the defaults and checks the rest."""

from __future__ import annotations

import sys
from pathlib import Path

from .attention import corpus
from .core import config as core_config, runtime
from .optim import cards
from .sensing import controls, dial, ladder, names, phase, phase_fine
from .tools import diagnose


def clashing_names(get):
    """Values that differ but name the same output: an init scale's arm and a dial p's label
    print the value with 6 significant digits (controls.init_arm, dial.label, phase.arm_name)."""
    for where, name in (("init_scale/inits", controls.init_arm), ("dial/ps", lambda p: dial.label(p, "rms")),
                        ("phase_diagram/taus", lambda tau: phase.arm_name(phase.COARSE, tau)),
                        ("signum_audit/taus", names.value_tag)):
        values, seen = get(where), {}
        for i, value in enumerate(values if isinstance(values, list) else []):
            if not core_config.is_number(value):
                continue
            if name(value) in seen:
                yield f"{where}/{i}", (f"{value!r} and {seen[name(value)]!r} both name the outputs "
                                       f"{name(value)!r}; list values that differ in their first 6 significant digits")
                break
            seen[name(value)] = value


def controls_outside_the_ladder(get):
    """A control's card (ScaledGD, class "ctrl") names a method of the GPU ladder's grids only
    (sensing.md §3.6): every other experiment's tables, figures and splits read a method as
    equivariant or coordinate-wise. Checked in each block's method grids (keys ending in grids)."""
    for block in core_config.schema()["properties"]:
        settings = get(block) if block != "ladder" else None
        for key, grids in settings.items() if isinstance(settings, dict) else ():
            if not key.endswith("grids") or not isinstance(grids, dict):
                continue
            for method in grids:
                if cards.klass(method) == "ctrl":
                    yield f"{block}/{key}/{method}", (f"{method} is the GPU ladder's control (sensing.md §3.6): "
                                                      "list it in ladder/grids only")


def unbuildable_optimizers(get):
    """Every optimizer the diagnostic would run resolves and, with its configured options and lr,
    builds on a small parameter: an unknown name fails at parse time, not in its job (about 2 s:
    torch.optim's first optimizer imports torch._dynamo)."""
    settings = get("diagnose")
    if not isinstance(settings, dict):
        return
    import torch

    listed = settings.get("optimizers", [])
    try:
        plan = diagnose.plan(settings)
    except diagnose.DiagnoseError as exc:
        yield "diagnose/optimizers", str(exc)
        return
    for item in plan.values():
        source = item["source"]
        try:
            diagnose.resolve(source)
        except diagnose.DiagnoseError as exc:
            yield f"diagnose/optimizers/{listed.index(source)}", str(exc)
            continue
        try:
            spec = diagnose.resolve(source, **item["options"])
            spec.make([torch.zeros(2, 2, dtype=torch.float64)], lambda params: params[0].square().sum(), item["lr"])
        except diagnose.DiagnoseError as exc:
            yield f"diagnose/settings/{source}/options", str(exc)


def checks(build_optimizers: bool = True) -> tuple:
    """The experiment-level rules. ``build_optimizers=False`` leaves out building the diagnostic's
    optimizers, for a process that runs a job of a workflow whose own process has built them (a
    cluster job)."""
    first = (clashing_names, controls_outside_the_ladder, ladder.problems, phase_fine.problems)
    return (*first, unbuildable_optimizers) if build_optimizers else first


def validate(config: dict, build_optimizers: bool = True) -> dict:
    """Fill defaults in place and check ``config`` whole; raise ``ConfigError`` naming each key."""
    return core_config.validate(config, checks(build_optimizers))


def load(path: str | Path | None = None) -> dict:
    """Read a YAML config (or none: the paper's defaults) and check it whole (``core.config.load``)."""
    return core_config.load(path, checks())


def for_workflow(config: dict, configfiles: list, main_process: bool, corpus_copy: str) -> str:
    """The workflow's start-up check (rules/common.smk), before any job: each config file read
    again strictly (Snakemake keeps the last of a key given twice, without a word), the whole
    config checked with its defaults filled in place, the numerics mode held to this machine, and
    a configured local corpus verified unless its copy ``corpus_copy`` is there. A problem ends the
    process with one line per problem and no traceback (a user's error). Returns the numerics mode.
    ``main_process``: see :func:`checks` (a cluster job's process leaves out building optimizers)."""
    try:
        for path in dict.fromkeys(configfiles):
            core_config.read(path)
        validate(config, build_optimizers=main_process)
        mode = runtime.available_mode()  # portable is refused here where it cannot hold
    except (core_config.ConfigError, runtime.NumericsError) as error:
        sys.exit(f"gaugelab: {error}")
    local = config["data"]["tinyshakespeare"].get("path")
    if local and not Path(corpus_copy).exists():
        try:
            corpus.verify(local, config["data"]["tinyshakespeare"]["sha256"])
        except corpus.CorpusError as error:
            sys.exit(f"gaugelab: config key data/tinyshakespeare/path: {error}")
    return mode
