"""Running a diagnosis: one optimizer on one testbed (the report), on every testbed asked for (the
bundle), and the diagnoses a workflow configuration asks for."""

from __future__ import annotations


import torch

from collections.abc import Sequence
from ... import optim
from ...core import runtime
from .errors import DiagnoseError
from .files import SCHEMA, bundle, provenance
from .optimizers import label_of, resolve
from .testbeds import TESTBEDS, make_testbed
from .triplet import run_triplet
from .verdicts import thresholds, verdict


def diagnose(source: str, testbed: str = "sensing", *, steps: int = 100, lr: float | None = 1e-2,
             dtype: str = "float64", sigma: float | None = None, options: dict | None = None,
             size: dict | None = None, threads: int | None = 1) -> dict:
    """Run the triplet for one optimizer on one testbed; return the JSON report (a dict)."""
    spec = resolve(source, **(options or {}))
    torch_dtype = runtime.resolve_dtype(dtype)
    device = runtime.configure(threads=threads)
    bed = make_testbed(testbed, torch_dtype, **(size or {}))
    limits = thresholds(torch_dtype)
    if sigma is not None:
        limits["sigma"] = sigma
    if steps < 1:
        raise DiagnoseError(f"--steps must be at least 1, got {steps}")
    before = torch.random.get_rng_state()
    run = run_triplet(bed, spec, lr, steps, limits["sigma"])
    global_rng_used = not torch.equal(before, torch.random.get_rng_state())
    name, evidence, sentence = verdict(run, limits)
    if name == "determinism failure" and global_rng_used:
        sentence += " (it drew from torch's global random generator)"
    return {
        "schema": SCHEMA, "optimizer": spec.source, "label": spec.label, "kind": spec.kind,
        "a_priori_equivariant": spec.equivariant, "options": dict(options or {}), "lr": lr,
        "steps": steps, "testbed": bed.describe(), "thresholds": limits,
        "verdict": name, "summary": sentence, "evidence": evidence,
        "global_rng_used": global_rng_used,
        "curve": {"step": run["step"], **run["drift"]},
        "loss": {"initial": run["loss_initial"], "final": run["loss_final"]},
        "environment": runtime.environment(dtype, device),
    }


def format_line(report: dict) -> str:
    """One printed line: optimizer, testbed, verdict, evidence."""
    return f"{report['optimizer']} on {report['testbed']['testbed']}: {report['verdict']} — {report['summary']}"


def run_all(source: str, testbeds: Sequence[str], **kw) -> dict:
    """Diagnose one optimizer on every testbed; the bundle of :func:`bundle`. Bad input (the
    optimizer, a testbed's name) fails before any training starts."""
    resolve(source, **(kw.get("options") or {}))
    for name in testbeds:
        if name not in TESTBEDS:
            raise DiagnoseError(f"unknown testbed {name!r}; use one of {', '.join(TESTBEDS)}")
        if name == "attention":  # its initialisation seeds torch's global generator (attention.md §3.2):
            make_testbed(name, torch.float64)  # an optimizer drawing from it sees a seeded one on every testbed
    stamp = provenance(source, testbeds, **kw)
    sizes = kw.pop("sizes", None) or {}
    return bundle(source, [diagnose(source, name, size=sizes.get(name), **kw) for name in testbeds], stamp)


def plan(settings: dict) -> dict[str, dict]:
    """The diagnoses a workflow config asks for (the ``diagnose`` block): label → source, lr,
    options, testbeds. The registry's rules first (when ``registry``), then ``optimizers`` in
    order; an optimizer whose ``settings`` exclude every configured testbed is left out."""
    sources = list(optim.REGISTRY) if settings.get("registry", True) else []
    sources += [s for s in settings.get("optimizers", []) if s not in sources]
    out: dict[str, dict] = {}
    for source in sources:
        label = label_of(source)
        if label in out:
            raise DiagnoseError(f"optimizers {out[label]['source']!r} and {source!r} share the label {label!r}")
        extra = settings.get("settings", {}).get(source, {})
        beds = [b for b in settings.get("testbeds", ["sensing"]) if b in extra.get("testbeds", TESTBEDS)]
        if beds:
            out[label] = {"source": source, "lr": float(extra.get("lr", settings["lr"])),
                          "options": dict(extra.get("options", {})), "testbeds": beds}
    return out
