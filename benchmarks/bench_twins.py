"""One Adam gauge pair (Section 6: init 42, gauge seed 777): the engine against plain PyTorch.

The baseline is the obvious implementation: ``torch.nn`` modules built in the spec's order
(nn.Embedding, bias-free nn.Linear, explicit attention), two models, two ``torch.optim.Adam``
instances, and the spec's loop (copy 1 then copy 2: zero_grad, forward, cross-entropy, backward,
step). The engine advances both copies as one batched program (gaugelab.attention.twins.train). Both run
the same steps on one thread, in alternating blocks so that a load change on a shared machine
hits both alike; CPU time (this process only) is printed beside wall time. The same-work line
compares the two implementations' drift between the twins.

    python benchmarks/bench_twins.py               # 200 steps
    python benchmarks/bench_twins.py --steps 50    # a quick look
"""

from __future__ import annotations

import argparse
import math
import time

import torch
import torch.nn.functional as F
from torch import nn

from gaugelab import optim
from gaugelab.attention import harness, tasks, transformer, twins
from gaugelab.core import config, runtime
from gaugelab.attention.pairs import Pair
from gaugelab.attention import configs

CFG = configs.CPU_MOD47


class PlainRMS(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.g = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return F.normalize(x, dim=-1) * math.sqrt(x.shape[-1]) * self.g


class PlainBlock(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.n1 = PlainRMS(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.n2 = PlainRMS(d)
        self.f1, self.f2 = nn.Linear(d, 4 * d, bias=False), nn.Linear(4 * d, d, bias=False)

    def forward(self, h):
        B, T, d = h.shape
        a = self.n1(h)
        q, k, v = (m(a).view(B, T, self.heads, -1).transpose(1, 2) for m in (self.q, self.k, self.v))
        s = q @ k.transpose(-1, -2) / math.sqrt(d // self.heads)
        h = h + self.o((s.softmax(-1) @ v).transpose(1, 2).reshape(B, T, d))
        return h + self.f2(F.silu(self.f1(self.n2(h))))


class PlainModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(CFG.vocab_in, CFG.d)
        self.pos = nn.Parameter(torch.randn(1, CFG.n_ctx, CFG.d) * 0.02)
        self.layers = nn.ModuleList(PlainBlock(CFG.d, CFG.n_head) for _ in range(CFG.n_layer))
        self.norm = PlainRMS(CFG.d)
        self.head = nn.Linear(CFG.d, CFG.vocab_out, bias=False)

    def forward(self, x):
        h = self.tok(x) + self.pos[:, : x.shape[1]]
        for block in self.layers:
            h = block(h)
        return self.head(self.norm(h[:, -1]))


def plain_pair(split):
    """Copy 1 and copy 2 (gauge twin, seed 777) and their two Adams; a step function."""
    torch.manual_seed(42)
    base = PlainModel()
    copies = [PlainModel(), PlainModel()]
    for c in copies:
        c.load_state_dict(base.state_dict())
    rot = harness.gauge_rotations(CFG, 777, torch.float32)
    with torch.no_grad():
        for i, block in enumerate(copies[1].layers):
            for h in range(CFG.n_head):
                rows = harness.head_rows(CFG, h)
                block.q.weight[rows] = rot[i, h] @ block.q.weight[rows]
                block.k.weight[rows] = rot[i, h] @ block.k.weight[rows]
    opts = [torch.optim.Adam(c.parameters(), lr=1e-3, betas=(0.9, 0.999), eps=1e-8) for c in copies]

    def step():
        for model, opt in zip(copies, opts):
            opt.zero_grad()
            F.cross_entropy(model(split.x_train), split.y_train).backward()
            opt.step()

    def drift():
        with torch.no_grad():
            return harness.drift(copies[0](split.x_val), copies[1](split.x_val))

    return step, drift


def engine_pair(split):
    base = transformer.initial_params(CFG, 42)
    params = transformer.stack([base, base])
    harness.make_twin(params, CFG, Pair.of("adam", "gauge", 42, 777))
    steps = twins.train(params, CFG, optim.adam(), 1e-3, split.x_train, split.y_train, 10**9)

    def drift():
        with torch.no_grad():
            z = transformer.forward(params, split.x_val, CFG)
        return harness.drift(z[0], z[1])

    return lambda: next(steps), drift


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--block", type=int, default=20, help="steps per alternating block")
    args = ap.parse_args()
    runtime.set_threads(1)
    torch.use_deterministic_algorithms(True)
    settings = config.load()["twins"]
    split = tasks.modular_addition(settings["P"], settings["data_seed"], settings["train_fraction"])
    impls = {"plain": plain_pair(split), "engine": engine_pair(split)}
    wall, cpu, first = {k: 0.0 for k in impls}, {k: 0.0 for k in impls}, {}
    done = 0
    while done < args.steps:
        n = min(args.block, args.steps - done)
        for name, (step, drift) in impls.items():
            w, c = time.perf_counter(), time.process_time()
            for _ in range(n):
                step()
            wall[name] += time.perf_counter() - w
            cpu[name] += time.process_time() - c
            if done == 0 and name not in first:
                first[name] = drift()  # after the first block
        done += n
    print(f"Adam gauge pair (init 42, gauge 777), {args.steps} steps, 1 thread, torch {torch.__version__}")
    for name in impls:
        print(f"  {name:7s} wall {wall[name]:6.1f} s  cpu {cpu[name]:6.1f} s  "
              f"({args.steps / wall[name]:.1f} pair-steps/s)")
    print(f"speed-up: {wall['plain'] / wall['engine']:.2f}x wall, {cpu['plain'] / cpu['engine']:.2f}x cpu")
    finals = {name: drift() for name, (_, drift) in impls.items()}
    print(f"same work: drift after {min(args.block, args.steps)} steps plain {first['plain']:.4e} engine "
          f"{first['engine']:.4e}; after {args.steps}: plain {finals['plain']:.4e} engine {finals['engine']:.4e}")


if __name__ == "__main__":
    main()
