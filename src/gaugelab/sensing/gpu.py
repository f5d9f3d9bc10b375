"""The GPU experiments' protocol where it differs from the CPU zoo's (spec: sensing.md §1.1, §1.5,
§2.2, §14.1), each difference once.

The rest is the CPU machinery, unchanged: :func:`runner.prepare` draws X, A and the factors in
float32 on the CPU exactly as the CPU path does and, for a float64 or device run, casts them and
computes y = A vec(X) after the cast; :func:`loop.train`'s ``"gpu"`` loop is the canonical
loop, except that a diverged run keeps the offending train loss (its rec, erank, nuc and bal stay
NaN). GPU runs add 1e-30 to rec's denominator, which leaves a float64 norm of any planted target
(far above 1e-14) unchanged to the bit, so the metrics are the CPU ones in float64.

What is the GPU protocol's own: m rounds (Python's round, half to even) where the CPU truncates,
which differs where m/dof times dof is not whole (the ladder's m/dof arm); and a run's status is
read from its final train against two bars, where the CPU loop knows only its tolerance.
"""

from __future__ import annotations

LOOP = "gpu"  # loop.LOOPS' GPU loop
INTERP, LOOSE, NOT_INTERPOLATED, DIVERGED = "interp", "loose", "n/i", "diverged"


def measurements(n: int, rank: int, per_dof: float) -> int:
    """m = round(per_dof * dof), dof = r(2n - r): the GPU protocol rounds (the CPU's truncates)."""
    return round(per_dof * rank * (2 * n - rank))


def status(loop_status: str, train: float, tol: float = 1e-7, loose: float = 1e-4) -> str:
    """A GPU run's status (§2.2): ``diverged`` as the loop found it; else ``interp`` below ``tol``,
    ``loose`` below ``loose`` (S5's gate), ``n/i`` (not interpolated) otherwise."""
    if loop_status == "diverged":
        return DIVERGED
    return INTERP if train < tol else LOOSE if train < loose else NOT_INTERPOLATED


def status_counts(runs: list[dict], tol: float = 1e-7, loose: float = 1e-4) -> str:
    """"2 loose, 1 interp": each GPU status of ``runs`` with its count, in first-seen order."""
    statuses = [status(r["status"], r["train"], tol, loose) for r in runs]
    return ", ".join(f"{statuses.count(s)} {s}" for s in dict.fromkeys(statuses))
