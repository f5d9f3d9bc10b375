"""From a resolved experiment config to run records: the one entry point that scripts, the
command line and tests share."""

from __future__ import annotations

import torch

from . import optim, records, runtime, sensing


def problem_size(exp: dict) -> dict:
    """The testbed sizes an experiment config implies, including the derived m."""
    m = sensing.measurements(exp["n"], exp["rank"], exp["measurements_per_dof"])
    return {"n": exp["n"], "rank": exp["rank"], "width": exp["width"], "m": m}


def prepare(exp: dict, seed: int, dtype: str, device: torch.device):
    """Instance and initial factors of one seed. Draws are float32 on the CPU (spec §1.2-1.5);
    float64 runs cast them and recompute y after the cast."""
    size = problem_size(exp)
    inst = sensing.make_instance(size["n"], size["rank"], size["m"], seed)
    u0, v0 = sensing.init_factors(size["n"], size["width"], exp["init"], seed)
    target = runtime.resolve_dtype(dtype)
    if target != torch.float32 or device.type != "cpu":
        a, x = inst.A.to(device, target), inst.X.to(device, target)
        inst = sensing.Instance(A=a, y=a @ x.reshape(-1), X=x)
        u0, v0 = u0.to(device, target), v0.to(device, target)
    return inst, u0, v0


def run_cells(experiment: str, exp: dict, method: str, seed: int, lrs: list[float], *,
              perturbations: list[float] | None = None, dtype: str = "float32",
              device: str = "cpu", threads: int | None = None) -> list[dict]:
    """Train one method on one seed's instance at every lr (one batch); return the records."""
    dev = runtime.configure(threads=threads, device=device)
    rule = optim.make(method)
    inst, u0, v0 = prepare(exp, seed, dtype, dev)
    decayed = method in exp["decayed"]
    results = sensing.train(inst, rule, [float(lr) for lr in lrs], u0, v0, budget=exp["budget"],
                            decayed=decayed, tol=exp["tol"], check_every=exp["check_every"],
                            perturbations=perturbations)
    env = runtime.environment(dtype, dev)
    config = {**problem_size(exp), "init": exp["init"], "budget": exp["budget"], "tol": exp["tol"],
              "check_every": exp["check_every"], "schedule": "cosine" if decayed else "const",
              "loop": "canonical", "dtype": dtype, "device": str(dev)}
    return [{
        "schema": records.SCHEMA, "experiment": experiment, "method": method, "lr": r.lr,
        "seed": seed, "perturbation": r.perturbation, "status": r.status, "steps": r.steps,
        "train": r.train, "rec": r.rec, "erank": r.erank, "nuc": r.nuc, "bal": r.bal,
        "curve": {"step": r.curve_steps, "loss": r.curve_loss},
        "config": config, "environment": env,
    } for r in results]
