"""The step-1 subset of the float64 suite (attention.md §14: cheap structural checks).

It measures steps 0 and 1 of every pair of a configuration. Step 1 is where Adam alone moves
(§12.4), and it fixes every Table 9 step-1 value and ratio_T9. Each distinct model is computed
once: step 0 (the base and copy 2 after the twin transform) depends only on the init seed and the
twin, not on the optimizer, so it is measured once per init seed (:func:`step0`, its own job in
the workflow: a record of kind ``gaugelab.twin_step0/1``), and copy 1 after one step once per
(optimizer, init seed). Every model is still the one the full loop of
:mod:`gaugelab.attention.float64` would produce: its copies, metrics and records are that module's.
"""

from __future__ import annotations

import math
import time

import torch

from . import harness
from ..core import progress, records, runtime
from .harness import STATUS_NONFINITE, STATUS_OK
from .pairs import Pair
from .float64 import Copy, Task, clone, end_metrics, initial_params, learning_rate, logits, measure, record
from .configs import ModelConfig
from .transformer import Params


def twin_key(pair: Pair | dict) -> tuple:
    """What copy 2 at step 0 depends on besides the configuration and init seed: of a pair, or of
    a step-0 record's point (which stores these three fields)."""
    if isinstance(pair, dict):
        return pair["twin"], pair["twin_seed"], float(pair["sigma"])
    return pair.twin, pair.twin_seed, float(pair.sigma)


def twins_of(pairs: list[Pair], init: int) -> list[Pair]:
    """One pair per distinct twin of ``init`` among ``pairs``, in their order."""
    return list({twin_key(p): p for p in reversed(pairs) if p.init_seed == init}.values())[::-1]


def step0_provenance(model: str, init: int | str, dtype: str) -> dict:
    """A step-0 record's provenance: its configuration and init seed, and the dtype. Each of its
    points names its own twin (the optimizers play no part at step 0)."""
    return records.provenance({"config": model, "init_seed": int(init), "steps": 0}, {"dtype": dtype})


def step0(cfg: ModelConfig, task: Task, init: int, pairs: list[Pair], *, dtype: torch.dtype = torch.float64,
          device: torch.device | str = "cpu") -> dict:
    """Step 0 of every twin of ``init`` among ``pairs``: the base and each copy 2 after its twin
    transform, measured on the validation inputs (an identity twin checked bit for bit), as a
    ``gaugelab.twin_step0/1`` record."""
    start = time.perf_counter()
    base = initial_params(cfg, init, dtype, device)
    z_base = logits(base, cfg, task.x_val)
    points = []
    for pair in twins_of(pairs, init):
        p2 = harness.twin_of(base, cfg, pair)
        twin, seed, sigma = twin_key(pair)
        points.append({"twin": twin, "twin_seed": seed, "sigma": sigma,
                       "point": measure(pair, cfg, 0, z_base, logits(p2, cfg, task.x_val), base, p2)})
    name = str(dtype).removeprefix("torch.")
    return {"schema": records.TWIN_STEP0_SCHEMA, "config": cfg.name, "init_seed": int(init), "dtype": name,
            "device": str(device), "points": points, "wall_s": round(time.perf_counter() - start, 3),
            "env": runtime.environment(name, device),
            "provenance": step0_provenance(cfg.name, init, name)}


def points_of(step0_records: list[dict]) -> dict[tuple, list]:
    """(init seed, twin key) -> its step-0 checkpoint row, from step-0 records (:func:`step0`, or
    read by records.read_twin_step0)."""
    return {(rec["init_seed"], twin_key(p)): p["point"] for rec in step0_records for p in rec["points"]}


def step1_subset(cfg: ModelConfig, task: Task, pairs: list[Pair], settings: dict, *,
                 step0_records: list[dict] | None = None, dtype: torch.dtype = torch.float64,
                 device: torch.device | str = "cpu", log=print) -> list[dict]:
    """Steps 0 and 1 of every pair, one record each (``steps`` = 1). Step 0 is taken from
    ``step0_records`` (:func:`step0` of each init seed) or, without them, measured here. Copy 1
    after one step is computed once per (optimizer, init seed). The identity twins are checked
    bit for bit at both steps."""
    if step0_records is None:
        step0_records = [step0(cfg, task, init, pairs, dtype=dtype, device=device)
                         for init in dict.fromkeys(p.init_seed for p in pairs)]
    at_step0 = points_of(step0_records)
    bases: dict[int, Params] = {}
    stepped: dict[tuple, tuple[Params, torch.Tensor, float]] = {}
    twin0: dict[tuple, Params] = {}
    out = []
    shown = progress.Progress(f"{cfg.name} step 1", len(pairs), 1, batched=False)
    for pair in pairs:
        shown.update(0, len(out))
        start = time.perf_counter()
        init = pair.init_seed
        if init not in bases:
            bases[init] = initial_params(cfg, init, dtype, device)
        lr = learning_rate(settings, cfg, pair.optimizer)
        if (pair.optimizer, init) not in stepped:
            c1 = Copy(clone(bases[init]), cfg, pair.optimizer, lr, settings)
            loss1 = c1.step(*task.batch(1))
            stepped[(pair.optimizer, init)] = ({k: v.detach() for k, v in c1.params.items()},
                                               c1.logits(task.x_val), loss1)
        key = (init, twin_key(pair))
        if key not in at_step0:
            raise records.RecordError(f"{cfg.name}: no step-0 record holds {pair}'s twin at init {init}")
        if key not in twin0:
            twin0[key] = harness.twin_of(bases[init], cfg, pair)
        c2 = Copy(clone(twin0[key]), cfg, pair.optimizer, lr, settings)
        loss2 = c2.step(*task.batch(1))
        z2 = c2.logits(task.x_val)
        p1, z1, loss1 = stepped[(pair.optimizer, init)]
        curve = [at_step0[key], measure(pair, cfg, 1, z1, z2, p1, c2.params)]
        finite = math.isfinite(loss2)
        ends = end_metrics(task, z1, z2)
        if task.kind == "text":
            ends.update(last_batch_loss1=loss1, last_batch_loss2=loss2)
        rec = record(cfg, pair, settings, steps=1, steps_done=1 if finite else 0, curve=curve,
                     per_head=harness.qk_drift_between(p1, c2.params, cfg), ends=ends,
                     status=STATUS_OK if finite else STATUS_NONFINITE, start=start, dtype=dtype, device=device)
        rec["set"] = "step1"
        out.append(rec)
        log(f"{cfg.name} {pair}: drift step 0 {curve[0][1]:.3e}, step 1 {curve[1][1]:.3e}, "
            f"QK step 1 {curve[1][2]:.3e} ({rec['wall_s']:.1f} s)"
            + (" determinism OK" if pair.twin == "identity" else ""))
    shown.finish(1)
    return out
