"""The twin triplet: base, gauge, identity and noise copies trained in lockstep and compared.

* **gauge twin**: the base parameters moved along the symmetry (sensing: (U, V) ↦ (UQ, VQ), Q a
  Haar-random orthogonal matrix; attention: (A W_Q, A W_K) per head). Same function, different
  basis.
* **identity twin**: the same code path with Q = I. Multiplying by an exact identity is exact, so
  this copy is bit-identical to the base at every step, for *every* deterministic optimizer,
  equivariant or not. It is the determinism control.
* **noise twin**: the base parameters, same basis, perturbed by σ times their RMS entry
  (sensing: every factor; attention: every W_Q and W_K entry, as in the paper). It measures how
  much the optimizer's dynamics amplify a tiny function difference.

drift(z₁, z₂) = ‖z₁ − z₂‖ / (½(‖z₁‖ + ‖z₂‖) + 1e-12) over the testbed's output (sensing: the
represented matrix W = UVᵀ; attention: the validation logits): the attention twins' metric
(``harness.drift``, attention.md §9.1), one definition for both testbeds.
"""

from __future__ import annotations

import math

import torch

from ...attention import harness
from ...core import progress
from .errors import DiagnoseError
from .optimizers import OptimizerSpec
from .testbeds import Testbed
from .verdicts import checkpoints

COPIES = ("base", "gauge", "identity", "noise")
TWINS = ("gauge", "identity", "noise")
drift = harness.drift
bit_identical = harness.bit_identical  # the one bit-level identity check (NaN == NaN, -0.0 != 0.0)


def run_triplet(testbed: Testbed, spec: OptimizerSpec, lr: float | None, steps: int,
                sigma: float) -> dict:
    """Base, gauge, identity and noise copies advanced in lockstep, each with its own optimizer.

    Every step compares each twin with the base (the drifts, and the identity twin bit for bit:
    parameters and output); the curves keep the :func:`checkpoints`, the verdict reads every
    step (``dense``). Also returns the base's movement and its initial and final loss. A testbed
    with a ``parts(params) -> {name: tensor}`` method (the audit's per-group invariants) has each
    part compared the same way: ``parts[name]`` holds its ``dense`` drifts and ``base_moved``.
    """
    base = testbed.initial()
    starts = {"base": base, "gauge": testbed.gauge(base), "identity": testbed.gauge(base, identity=True),
              "noise": testbed.noise(base, sigma)}
    copies = {name: spec.make(starts[name], testbed.loss, lr) for name in COPIES}
    marks = set(checkpoints(steps))
    dense = {twin: [] for twin in TWINS}
    identical, first_difference = True, None
    out0 = testbed.output(copies["base"].params)
    loss0 = float(testbed.loss(copies["base"].params))
    moved, diverged_at = 0.0, None
    parts_of = getattr(testbed, "parts", None)
    with torch.no_grad():
        parts0 = parts_of(copies["base"].params) if parts_of else {}
    parts = {key: {"dense": {twin: [] for twin in TWINS}, "base_moved": 0.0} for key in parts0}

    def compare(t: int) -> None:
        nonlocal identical, first_difference, moved
        with torch.no_grad():
            outs = {name: testbed.output(c.params) for name, c in copies.items()}
            pieces = {name: parts_of(c.params) for name, c in copies.items()} if parts_of else {}
        for twin in TWINS:
            dense[twin].append(drift(outs["base"], outs[twin]))
            for key, part in parts.items():
                part["dense"][twin].append(drift(pieces["base"][key], pieces[twin][key]))
        for key, part in parts.items():
            part["base_moved"] = drift(pieces["base"][key], parts0[key])
        same = bit_identical(copies["base"].params + [outs["base"]],
                             copies["identity"].params + [outs["identity"]])
        if not same and identical:
            identical, first_difference = False, t
        moved = drift(outs["base"], out0)

    compare(0)
    shown = progress.Progress(f"diagnose {spec.source} on {testbed.name}", 1, steps)
    for t in range(1, steps + 1):
        shown.update(t - 1, 0)
        for c in copies.values():
            try:
                c.step(t)
            except Exception as exc:  # the optimizer's own step: name it, keep the traceback
                raise DiagnoseError(f"optimizer {spec.source!r} failed at step {t} on {testbed.name}: "
                                    f"{type(exc).__name__}: {exc}") from exc
        compare(t)
        if not all(math.isfinite(dense[twin][-1]) for twin in TWINS):
            diverged_at = t
            marks.add(t)
            break
    shown.finish(len(dense["gauge"]) - 1)
    loss_final = float(testbed.loss(copies["base"].params).detach())
    kept = sorted(s for s in marks if s < len(dense["gauge"]))
    return {
        "step": kept,
        "drift": {twin: [dense[twin][s] for s in kept] for twin in TWINS},
        "dense": dense,
        "identity_bit_identical": identical,
        "identity_first_difference": first_difference,
        "base_moved": moved,
        "loss_initial": loss0,
        "loss_final": loss_final,
        "diverged_at": diverged_at,
        "parts": parts,
    }
