"""The step-1 subset of the float64 suite (attention.md §14: cheap structural checks).

It measures steps 0 and 1 of every pair of a configuration in one process. Step 1 is where Adam
alone moves (§12.4), and it fixes every Table 9 step-1 value and ratio_T9. It computes each
distinct model once: the step-0 copy 2 of a twin does not depend on the optimizer, and copy 1
after one step depends only on (optimizer, init seed). Every model is still the one the full
loop of :mod:`gaugelab.attention.float64` would produce: its copies, metrics and records are that module's.
"""

from __future__ import annotations

import math
import time

import torch
from torch import Tensor

from . import harness
from ..core import progress
from .harness import STATUS_NONFINITE, STATUS_OK
from .pairs import Pair
from .float64 import Copy, Task, clone, end_metrics, initial_params, learning_rate, logits, measure, record
from .configs import ModelConfig
from .transformer import Params


def step1_subset(cfg: ModelConfig, task: Task, pairs: list[Pair], settings: dict, *,
                 dtype: torch.dtype = torch.float64, device: torch.device | str = "cpu",
                 log=print) -> list[dict]:
    """Steps 0 and 1 of every pair, one record each (``steps`` = 1). Each distinct model is
    computed once: base per init seed, copy 1 after one step per (optimizer, init seed), copy 2
    at step 0 per twin. The identity twins are checked bit for bit at both steps."""
    bases: dict[int, Params] = {}
    z_base: dict[int, Tensor] = {}
    stepped: dict[tuple, tuple[Params, Tensor, float]] = {}
    twin0: dict[tuple, tuple[Params, Tensor]] = {}
    out = []
    shown = progress.Progress(f"{cfg.name} step 1", len(pairs), 1, batched=False)
    for pair in pairs:
        shown.update(0, len(out))
        start = time.perf_counter()
        init = pair.init_seed
        if init not in bases:
            bases[init] = initial_params(cfg, init, dtype, device)
            z_base[init] = logits(bases[init], cfg, task.x_val)
        lr = learning_rate(settings, cfg, pair.optimizer)
        if (pair.optimizer, init) not in stepped:
            c1 = Copy(clone(bases[init]), cfg, pair.optimizer, lr, settings)
            loss1 = c1.step(*task.batch(1))
            stepped[(pair.optimizer, init)] = ({k: v.detach() for k, v in c1.params.items()},
                                               c1.logits(task.x_val), loss1)
        twin_key = (pair.twin, init, pair.twin_seed, pair.sigma)
        if twin_key not in twin0:
            p2 = harness.twin_of(bases[init], cfg, pair)
            twin0[twin_key] = (p2, logits(p2, cfg, task.x_val))
        p2_0, z2_0 = twin0[twin_key]
        c2 = Copy(clone(p2_0), cfg, pair.optimizer, lr, settings)
        loss2 = c2.step(*task.batch(1))
        z2 = c2.logits(task.x_val)
        p1, z1, loss1 = stepped[(pair.optimizer, init)]
        curve = [measure(pair, cfg, 0, z_base[init], z2_0, bases[init], p2_0),
                 measure(pair, cfg, 1, z1, z2, p1, c2.params)]
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
