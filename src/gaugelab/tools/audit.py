"""Audit a real model and an optimizer for basis dependence: the triplet of
:mod:`gaugelab.tools.diagnose`, applied to every gauge symmetry the model has.

``gaugelab audit --model SPEC --optimizer SPEC`` finds the symmetry candidates from the model's
structure (:mod:`gaugelab.tools.symmetries`), verifies each numerically, and trains the triplet
(gauge, A = I and noise twins, each with its own optimizer) for every one that holds. Verdicts,
thresholds and the optimizer SPEC are :mod:`gaugelab.tools.diagnose`'s, unchanged.

Model SPEC: a built-in name (:data:`BUILTINS`) or ``package.module:factory``. The factory is
called with no arguments and returns ``(model, batch)`` or ``(model, batch, loss_fn)``:

* ``model``: an ``nn.Module`` in the mode it trains in (dropout draws from the global generator,
  so the A = I twin would fail: set it to 0 or return ``model.eval()``); it is cast to --dtype.
* ``batch``: what the model is called on, every step (full batch): a dict → ``model(**batch)``,
  a tuple or list → ``model(*batch)``, a tensor → ``model(batch)``; floating tensors are cast.
* the loss: ``loss_fn(output, batch)`` when given, else ``output.loss`` (Hugging Face models
  given ``labels``), else ``output["loss"]``, else the output itself when it is a scalar.

The compared output is ``output.logits`` (or ``["logits"]``), else the output tensor, else the
first tensor of a tuple (``nn.MultiheadAttention``'s attention output).

A candidate holds when the transformed model's output equals the original's to the round-off
floor (diagnose's FLOOR = ε^¾) both at the model's own parameters and at a generic point (every
tensor perturbed by 10 % of its RMS entry: gains of one would hide a qk-norm otherwise); else it
is reported absent, with the structural reason and both measured differences. Each present
symmetry gets a verdict on the model's output and one per group (the module it acts in), read
from the drift of what the group's rotations keep (its factor products LᵀR).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from . import diagnose, symmetries
from ..core import portable, records, runtime
from .audit_models import BUILTINS

SCHEMA = records.AUDIT_SCHEMA
GENERIC_SEED = 999
GENERIC_SCALE = 0.1


class AuditError(diagnose.DiagnoseError):
    """Bad input to the audit (a model SPEC that cannot be imported or built, an output with no
    loss); the message names the offending value."""


# --- the subject: a model, its batch and its loss, called functionally -----------------------------


@dataclass
class Subject:
    spec: str
    model: nn.Module
    batch: object
    loss_fn: Callable | None
    names: list[str]

    def call(self, params):
        state = dict(zip(self.names, params))
        b = self.batch
        if isinstance(b, dict):
            return torch.func.functional_call(self.model, state, (), dict(b))
        return torch.func.functional_call(self.model, state, tuple(b) if isinstance(b, (tuple, list)) else (b,))

    def loss(self, params) -> Tensor:
        out = self.call(params)
        if self.loss_fn is not None:
            return self.loss_fn(out, self.batch)
        loss = getattr(out, "loss", None)
        if loss is None and isinstance(out, dict):
            loss = out.get("loss")
        if loss is None and isinstance(out, Tensor) and out.dim() == 0:
            loss = out
        if loss is None:
            raise AuditError(f"model {self.spec!r}: its output has no .loss and the factory named no loss_fn; "
                             "return (model, batch, loss_fn) or pass labels")
        return loss

    def output(self, params) -> Tensor:
        out = self.call(params)
        logits = getattr(out, "logits", None)
        if logits is None and isinstance(out, dict):
            logits = out.get("logits")
        if logits is None:
            logits = out if isinstance(out, Tensor) else next(x for x in out if isinstance(x, Tensor))
        return logits


def _cast(x, dtype):
    if isinstance(x, Tensor):
        return x.to(dtype) if x.is_floating_point() else x
    if isinstance(x, dict):
        return {k: _cast(v, dtype) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        return type(x)(_cast(v, dtype) for v in x)
    return x


def load_subject(spec: str, dtype: torch.dtype) -> Subject:
    """A model SPEC (module docstring) built and cast to ``dtype``."""
    if spec in BUILTINS:
        factory = BUILTINS[spec]
    elif ":" in spec:
        module, _, attr = spec.partition(":")
        try:
            factory = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            raise AuditError(f"model {spec!r}: cannot import {attr!r} from {module!r} ({exc})") from None
    else:
        raise AuditError(f"unknown model {spec!r}: use a built-in ({', '.join(BUILTINS)}) or package.module:factory")
    try:
        made = factory()
    except ImportError as exc:
        raise AuditError(f"model {spec!r} needs a package that is not installed ({exc}); "
                         "pip install 'gaugelab[audit]'") from None
    except Exception as exc:  # the user's factory: name it and what it raised
        raise AuditError(f"model {spec!r}: the factory raised {type(exc).__name__}: {exc}") from exc
    if not isinstance(made, tuple) or len(made) not in (2, 3) or not isinstance(made[0], nn.Module):
        raise AuditError(f"model {spec!r}: the factory must return (model, batch) or (model, batch, loss_fn)")
    model, batch, loss_fn = (*made, None)[:3]
    model = model.to(dtype)
    return Subject(spec, model, _cast(batch, dtype), loss_fn, [n for n, _ in model.named_parameters()])


# --- verification and the testbed the triplet runs on ---------------------------------------------


def _generic(params: list[Tensor]) -> list[Tensor]:
    g = torch.Generator().manual_seed(GENERIC_SEED)
    out = []
    for p in params:
        rms = float(portable.sqrt(p.detach().pow(2).mean())) if p.numel() else 0.0
        out.append(p.detach() + GENERIC_SCALE * (rms or 1.0) * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return out


@dataclass
class ModuleTestbed:
    """diagnose's Testbed protocol for one symmetry of a real model: parameters in
    ``named_parameters`` order, the symmetry's rotations as the gauge, noise on its slices."""

    subject: Subject
    candidate: symmetries.Candidate
    dtype: torch.dtype
    gauge_seed: int = diagnose.GAUGE_SEED
    noise_seed: int = diagnose.NOISE_SEED

    @property
    def name(self) -> str:
        return self.candidate.name

    def initial(self):
        return [p.detach().clone() for p in self.subject.model.parameters()]

    def gauge(self, params, identity=False):
        groups = self.candidate.groups
        rotations = symmetries.draw(groups, torch.Generator().manual_seed(self.gauge_seed), self.dtype, identity)
        moved = symmetries.rotate(dict(zip(self.subject.names, params)), groups, rotations)
        return [moved[n] for n in self.subject.names]

    def noise(self, params, sigma):
        state = {n: p.detach().clone() for n, p in zip(self.subject.names, params)}
        slices = sorted({(s, g.dim) for g in self.candidate.groups for o in g.orbits for s in o.slices},
                        key=lambda item: (item[0].param, item[0].axis, item[0].start))
        block = torch.cat([symmetries._block(state[s.param], s, dim).reshape(-1) for s, dim in slices])
        rms = float(portable.sqrt(block.pow(2).mean()))
        g = torch.Generator().manual_seed(self.noise_seed)
        for s, dim in slices:
            view = state[s.param].narrow(s.axis, s.start, dim)
            view.add_(sigma * rms * torch.randn(view.shape, generator=g, dtype=self.dtype))
        return [state[n] for n in self.subject.names]

    def loss(self, params):
        return self.subject.loss(params)

    def output(self, params):
        return self.subject.output(params)

    def parts(self, params) -> dict[str, Tensor]:
        state = dict(zip(self.subject.names, params))
        return {g.module: symmetries.invariants(state, g) for g in self.candidate.groups}

    def describe(self) -> dict:
        return {"testbed": self.subject.spec, "symmetry": self.candidate.name,
                "gauge_seed": self.gauge_seed, "noise_seed": self.noise_seed}


def verify(bed: ModuleTestbed, floor: float) -> dict:
    """The transformed model's output against the original's, at the model's parameters and at
    a generic point: present when both differences are at most ``floor``."""
    diffs = []
    with torch.no_grad():
        for point in (bed.initial(), _generic(bed.initial())):
            diffs.append(diagnose.drift(bed.output(point), bed.output(bed.gauge(point))))
    present = all(d <= floor for d in diffs)
    return {"present": present, "difference": diffs[0], "difference_generic": diffs[1]}


def _group_verdicts(run: dict, limits: dict, bed: ModuleTestbed) -> list[dict]:
    out = []
    for g in bed.candidate.groups:
        part = run["parts"][g.module]
        view = {**run, "dense": part["dense"], "base_moved": part["base_moved"]}
        name, evidence, sentence = diagnose.verdict(view, limits)
        out.append({"module": g.module, "params": g.params(), "rotations": len(g.orbits), "dim": g.dim,
                    "verdict": name, "summary": sentence, "evidence": evidence})
    return out


def audit(model: str, optimizer, *, steps: int = 50, lr: float | None = None, dtype: str = "float64",
          options: dict | None = None, sigma: float | None = None, threads: int | None = 1,
          only: list[str] | None = None) -> dict:
    """Audit one optimizer on one model: every candidate symmetry verified, the present ones
    (or those named in ``only``) trained through the triplet. Returns the JSON record (a dict)."""
    if steps < 1:
        raise AuditError(f"--steps must be at least 1, got {steps}")
    spec = diagnose.resolve(optimizer, **(options or {}))
    torch_dtype = runtime.resolve_dtype(dtype)
    device = runtime.configure(threads=threads)
    subject = load_subject(model, torch_dtype)
    limits = diagnose.thresholds(torch_dtype)
    if sigma is not None:
        limits["sigma"] = sigma
    found, present = [], symmetries.candidates(subject.model)
    absent = [name for name in only or [] if name not in {cand.name for cand in present}]
    if absent:  # an empty record would read as an audit that found nothing
        raise AuditError(f"--symmetry {', '.join(absent)}: model {model!r} has no such candidate; "
                         f"its candidates: {', '.join(c.name for c in present) or 'none'}")
    for cand in present:
        if only is not None and cand.name not in only:
            continue
        bed = ModuleTestbed(subject, cand, torch_dtype)
        entry = {"name": cand.name, **verify(bed, limits["floor"]), "breaks": cand.breaks, "notes": cand.notes,
                 "groups": [{"module": g.module, "params": g.params(), "rotations": len(g.orbits), "dim": g.dim,
                             "rope": g.rope} for g in cand.groups]}
        if entry["present"]:
            run = diagnose.run_triplet(bed, spec, lr, steps, limits["sigma"])
            name, evidence, sentence = diagnose.verdict(run, limits)
            entry.update({"verdict": name, "summary": sentence, "evidence": evidence,
                          "curve": {"step": run["step"], **run["drift"]},
                          "loss": {"initial": run["loss_initial"], "final": run["loss_final"]},
                          "groups": _group_verdicts(run, limits, bed)})
        else:
            entry["summary"] = (f"absent: the transformed model's output differs by {entry['difference']:.1e} "
                                f"(generic point: {entry['difference_generic']:.1e}) > floor {limits['floor']:.1e}; "
                                + (entry["breaks"] or "no structural reason found"))
        found.append(entry)
    settings = {"steps": steps, "lr": lr, "dtype": dtype, "sigma": sigma, "options": dict(options or {}), "only": only}
    return {
        "schema": SCHEMA, "model": model, "optimizer": spec.source, "label": spec.label, "kind": spec.kind,
        "lr": lr, "steps": steps, "options": dict(options or {}), "thresholds": limits, "symmetries": found,
        "environment": runtime.environment(dtype, device),
        "provenance": records.provenance({"model": model, "optimizer": spec.source}, settings),
    }


def format_lines(record: dict) -> list[str]:
    """One printed line per symmetry: present with its verdict, or absent with the reason."""
    lines = []
    for s in record["symmetries"]:
        head = f"{record['optimizer']} on {record['model']}, {s['name']}"
        if not s["present"]:
            lines.append(f"{head}: {s['summary']}")
            continue
        lines.append(f"{head}: {s['verdict']} — {s['summary']}")
        lines += [f"    {g['module']}: {g['verdict']} — {g['summary']}" for g in s["groups"]]
    return lines


def verdicts(record: dict) -> dict[str, str]:
    """symmetry name → verdict, for the present symmetries."""
    return {s["name"]: s["verdict"] for s in record["symmetries"] if s["present"]}
