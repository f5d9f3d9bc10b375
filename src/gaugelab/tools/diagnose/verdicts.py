"""The diagnostic's verdict: thresholds from the dtype's epsilon, and six rules over the drifts.

Everything is derived from the machine epsilon ε of the run dtype (float64: 2.2e-16, float32:
1.2e-7), on a log scale between ε and 1:

* FLOOR = ε^(3/4) (float64: 1.8e-12 ≈ 8.2e3 ε; float32: 6.4e-6 ≈ 54 ε). "At the round-off
  floor": one function evaluated in two bases differs by a few ε at step 0, and a non-chaotic
  equivariant run only accumulates round-off slowly; a quarter of the dtype's decades above ε
  leaves room for that growth (measured on the default sensing testbed in float64: the engine's
  equivariant rules stay below 8e-15 over 100 steps; over 300, Muon's gauge twin grows through
  the floor near step 245, as its steps amplify round-off near convergence: chaotic) and is far
  below any structural split.
* σ = ε^(1/2) (float64: 1.5e-8; float32: 3.5e-4), the noise twin's relative perturbation, halfway
  between ε and 1 in decades, so it starts ε^(-1/4) above the floor.
* RATIO = 100: the structural split must exceed the noise twin by two decades at the step where
  the gauge twin leaves the floor (the paper's Adam splits by 10⁴ at step 1).
* DECADES = 1.0: a chaotic gauge twin tracks its noise twin. Amplified round-off grows through
  the floor gradually (its first value above the floor is ≤ 10 × FLOOR) and, starting ε^(-1/4)
  below the noise twin, catches up with it at most when the chaos saturates. So, from the step
  where it leaves the floor on, either max (g + ε)/(n + ε) ≤ 10^DECADES (g, n: the gauge and
  noise twins' drift; before saturation), or the Appendix D.5 decades metric,
  mean |log10((g + ε)/(n + ε))| over the second half of the run, is < DECADES (after
  saturation; its guard 1e-12 becomes ε so that float64 floor values are not masked).

The twins are compared at every step; the stored curves keep step 0, every step to 20, then
about 20 points per decade.

Applied in this order, first match wins:

1. ``determinism failure``: the identity twin is not bit-identical to the base (parameters and
   output, tested with ==) at some checkpoint. Nothing else can be read from the twins then.
2. ``inconclusive``: a copy's output went non-finite (diverged; lower the lr), or the base run's
   output moved by less than σ (relative), so no drift could have shown.
3. ``equivariant``: the gauge twin's drift stays ≤ FLOOR at every checkpoint.
4. ``basis-dependent``: at the first step s* where the gauge twin exceeds FLOOR (step 1 for
   Adam), its drift is ≥ RATIO × the noise twin's at s*. The evidence is s* and the ratio.
5. ``chaotic``: the gauge twin left the floor gradually, not by a structural split, and tracks
   its noise twin (DECADES above): the dynamics amplify round-off (Muon's
   Newton–Schulz on the paper's attention model, scalar-Adam on the small one here after ~50
   steps), not the basis.
6. ``inconclusive`` otherwise (the evidence says which numbers fell between the thresholds).
"""

from __future__ import annotations

import math

import torch

RATIO = 100.0
DECADES = 1.0
VERDICTS = ("equivariant", "basis-dependent", "chaotic", "determinism failure", "inconclusive")


def thresholds(dtype: torch.dtype) -> dict[str, float]:
    """The verdict thresholds of a dtype (module docstring): all derived from its epsilon."""
    eps = torch.finfo(dtype).eps
    return {"eps": eps, "floor": eps ** 0.75, "sigma": eps ** 0.5, "ratio": RATIO, "decades": DECADES}


def decades(g: float, n: float, guard: float) -> float:
    """dec = |log10((g + guard) / (n + guard))| (attention.md §9.4, guard = the dtype's ε)."""
    return abs(math.log10((g + guard) / (n + guard)))


def checkpoints(steps: int) -> list[int]:
    """Step 0, every step up to 20, then about 20 per decade, and the last step."""
    points = set(range(0, min(steps, 20) + 1))
    s = 20.0
    while s < steps:
        points.add(int(round(s)))
        s *= 10 ** (1 / 20)
    points.add(steps)
    return sorted(points)


def verdict(run: dict, limits: dict[str, float]) -> tuple[str, dict, str]:
    """The verdict of one triplet (module docstring, rules 1–6): (verdict, evidence, sentence).

    Reads the every-step drifts ``run["dense"]`` (index = step)."""
    g, n = run["dense"]["gauge"], run["dense"]["noise"]
    floor, eps = limits["floor"], limits["eps"]
    finite = [x for x in g if math.isfinite(x)] or [math.nan]
    ev: dict = {"gauge_max": max(finite), "noise_at_end": n[-1], "gauge_step1": g[1] if len(g) > 1 else math.nan,
                "noise_step1": n[1] if len(n) > 1 else math.nan, "base_moved": run["base_moved"]}
    if not run["identity_bit_identical"]:
        ev["identity_first_difference"] = run["identity_first_difference"]
        ev["identity_max"] = max(x for x in run["dense"]["identity"] if not math.isnan(x))
        return ("determinism failure", ev,
                f"identity twin not bit-identical (first at step {run['identity_first_difference']}, "
                f"drift up to {ev['identity_max']:.1e}): the optimizer is not a deterministic function "
                "of its inputs, so the gauge twin says nothing")
    if run["diverged_at"] is not None:
        ev["diverged_at"] = run["diverged_at"]
        return "inconclusive", ev, f"diverged at step {run['diverged_at']}; lower --lr"
    if not run["base_moved"] > limits["sigma"]:
        return ("inconclusive", ev, f"the base run's output moved by {run['base_moved']:.1e} < σ = "
                f"{limits['sigma']:.1e}; raise --lr or --steps")
    if ev["gauge_max"] <= floor:
        return ("equivariant", ev, f"gauge twin stays at the round-off floor (max drift {ev['gauge_max']:.1e} "
                f"≤ {floor:.1e}), {ev['noise_at_end'] / max(ev['gauge_max'], eps):.1e}× below its noise "
                f"twin at the end ({ev['noise_at_end']:.1e})")
    split = next(s for s, x in enumerate(g) if x > floor)
    ratio = g[split] / max(n[split], eps)
    above = max((g[s] + eps) / (n[s] + eps) for s in range(split, len(g)))
    late = range(max(1, math.ceil((len(g) - 1) / 2)), len(g))
    ev.update({"split_step": split, "gauge_at_split": g[split], "noise_at_split": n[split], "ratio": ratio,
               "max_gauge_over_noise": above,
               "late_decades": sum(decades(g[s], n[s], eps) for s in late) / len(late)})
    if ratio >= limits["ratio"]:
        return ("basis-dependent", ev, f"gauge twin splits at step {split} (drift {g[split]:.1e}), "
                f"{ratio:.1e}× its noise twin ({n[split]:.1e})")
    gradual = g[split] <= 10 * floor
    if gradual and (above <= 10 ** limits["decades"] or ev["late_decades"] < limits["decades"]):
        how = (f"stays within {limits['decades']:.0f} decade of its noise twin or below it (max ratio {above:.1e})"
               if above <= 10 ** limits["decades"] else
               f"tracks its noise twin ({ev['late_decades']:.2f} decades apart on average over steps ≥ {late[0]})")
        return ("chaotic", ev, f"gauge twin grows through the floor at step {split} and {how}: amplified "
                "round-off, not the basis")
    why = (f"jumps past the floor at step {split} ({g[split]:.1e} > 10× floor)" if not gradual
           else f"rises to {above:.1e}× its noise twin")
    return ("inconclusive", ev, f"gauge twin {why} without a structural split (ratio {ratio:.1e} at step "
            f"{split} < {limits['ratio']:.0f}): a weak basis effect or unresolved chaos; more steps or "
            "another lr may decide")


def agrees(row: dict) -> bool:
    """Whether a verdict is consistent with the engine's a-priori class: an equivariant rule may
    also come out chaotic (round-off amplified by the dynamics, not by the basis)."""
    if row["a_priori"] == "equivariant":
        return row["verdict"] in ("equivariant", "chaotic")
    return row["verdict"] == row["a_priori"]
