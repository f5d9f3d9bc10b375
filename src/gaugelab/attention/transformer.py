"""The bias-free pre-norm transformer of the attention-twin experiments (spec: attention.md §3).

No biases, no qk-norm, no dropout, no RoPE: each head's query/key row blocks carry the O(hd)
gauge (W_Q^h, W_K^h) ↦ (A W_Q^h, A W_K^h), which leaves every score unchanged. A learned absolute
position embedding is added to the token embedding; attention is not causal on the mod task.

Two views of one architecture:

- :class:`Transformer`, an ``nn.Module`` built with PyTorch's default layer initialisers in the
  §3.2 order from the global RNG. It exists to draw the CPU model's initial weights exactly as
  the paper did, and its parameter order is the spec's iteration order (pos, E, per layer
  [g1, W_Q, W_K, W_V, W_O, g2, W_1, W_2], g_f, W_out).
- :func:`forward`, the same network as a function of a parameter dict whose tensors carry a
  leading *run* dimension (B, ...), so that both copies of a twin pair (or any runs) advance as
  one batched program. ``Transformer.forward`` calls it with B = 1.

Weights use the (out, in) layout, y = x Wᵀ; head h owns rows h·hd … (h+1)·hd − 1 of W_Q and W_K.

The float64 suite of Table 9 (§4) shares this architecture and differs in its initialisation
(a grouped generator-based draw), embedding (one-hot matmul), loss and read-out: it adds its own
``ModelConfig``s and an initialiser beside :func:`initial_params`, and reuses :func:`forward`.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .configs import ModelConfig

Params = dict[str, Tensor]  # spec name -> tensor, leading run dimension (B, ...) in `forward`


LAYER_NAMES = ("g1", "W_Q", "W_K", "W_V", "W_O", "g2", "W_1", "W_2")
MATRIX_NAMES = ("W_Q", "W_K", "W_V", "W_O", "W_1", "W_2")  # Muon's set (§3.2); the rest get Adam


def param_names(cfg: ModelConfig) -> list[str]:
    """The CPU model's parameter iteration order (§3.2): optimizer loop and scalar-Adam sum."""
    layers = [f"l{i}.{name}" for i in range(cfg.n_layer) for name in LAYER_NAMES]
    return ["pos", "E", *layers, "g_f", "W_out"]


def is_matrix(name: str) -> bool:
    """Whether Muon's Newton–Schulz step handles this parameter (E, pos, gains, W_out do not)."""
    return name.split(".")[-1] in MATRIX_NAMES


# --- construction: the CPU model's initialisation path (§3.2) ---------------------------------


class RMSNorm(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.g = nn.Parameter(torch.ones(d))  # no RNG


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        d = cfg.d
        self.norm1 = RMSNorm(d)
        self.W_Q = nn.Linear(d, d, bias=False)  # U(±1/√d) each, in this order
        self.W_K = nn.Linear(d, d, bias=False)
        self.W_V = nn.Linear(d, d, bias=False)
        self.W_O = nn.Linear(d, d, bias=False)
        self.norm2 = RMSNorm(d)
        self.W_1 = nn.Linear(d, cfg.mlp, bias=False)  # U(±1/√d)
        self.W_2 = nn.Linear(cfg.mlp, d, bias=False)  # U(±1/√(4d))


class Transformer(nn.Module):
    """The CPU float32 model, built in the §3.2 order from the global RNG: E ~ N(0, 1)
    (embedding init), pos = randn·0.02, then per layer W_Q, W_K, W_V, W_O, W_1, W_2 (kaiming
    uniform, a = √5), then W_out. ``pos`` is the module's own parameter, so it iterates first."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.E = nn.Embedding(cfg.vocab_in, cfg.d)
        self.pos = nn.Parameter(torch.randn(1, cfg.n_ctx, cfg.d) * 0.02)
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.norm_f = RMSNorm(cfg.d)
        self.W_out = nn.Linear(cfg.d, cfg.vocab_out, bias=False)

    def params(self) -> Params:
        """The parameters under their spec names, in iteration order (no run dimension)."""
        tensors = [p for _, p in self.named_parameters()]
        names = param_names(self.cfg)
        assert len(tensors) == len(names)
        return dict(zip(names, tensors))

    def forward(self, tokens: Tensor) -> Tensor:
        return forward({k: v[None] for k, v in self.params().items()}, tokens, self.cfg)[0]


def initial_params(cfg: ModelConfig, init_seed: int) -> Params:
    """§3.2 steps 1–4: seed the global RNG, build the model, and return detached copies of its
    weights. Copies 1 and 2 of a pair are clones of these (loading base's state dict into two
    freshly built models gives the same tensors; the RNG those builds consume is never used)."""
    torch.manual_seed(init_seed)
    base = Transformer(cfg)
    return {name: p.detach().clone() for name, p in base.params().items()}


def stack(copies: list[Params]) -> Params:
    """Several parameter dicts as one, with a leading run dimension."""
    return {name: torch.stack([c[name] for c in copies]) for name in copies[0]}


def count(params: Params) -> int:
    return sum(p.numel() for p in params.values())


# --- the network, batched over runs ------------------------------------------------------------


class _RMS(torch.autograd.Function):
    """RMS(x; g) with a hand-written backward: the forward is the spec's expression, and the
    backward is its exact derivative in six tensor operations instead of autograd's chain through
    normalize (checked against autograd in tests/test_twins.py)."""

    @staticmethod
    def forward(ctx, x: Tensor, g: Tensor) -> Tensor:
        scale = math.sqrt(x.shape[-1])
        norm = torch.linalg.vector_norm(x, dim=-1, keepdim=True).clamp_min(1e-12)
        u = x / norm                                             # = F.normalize(x, dim=-1)
        ctx.save_for_backward(u, norm, g)
        return u * scale * g

    @staticmethod
    def backward(ctx, dy: Tensor):
        u, norm, g = ctx.saved_tensors
        scale = math.sqrt(u.shape[-1])
        du = dy * (g * scale)
        dx = (du - u * (du * u).sum(dim=-1, keepdim=True)) / norm  # clamped rows: norm = 1e-12, u = 0
        dg = (dy * u).sum(dim=tuple(range(1, dy.dim() - 1)), keepdim=True) * scale
        return dx, dg.reshape(g.shape)


def rms(x: Tensor, g: Tensor) -> Tensor:
    """x/max(‖x‖, 1e-12)·√d ⊙ g over the feature axis, in this order (§3.1). g: (B, d)."""
    shape = (g.shape[0],) + (1,) * (x.dim() - 2) + (g.shape[-1],)
    return _RMS.apply(x, g.view(shape))


def linear(x: Tensor, w: Tensor) -> Tensor:
    """y = x Wᵀ per run: x (B, M, in), W (B, out, in) -> (B, M, out)."""
    return x @ w.mT


SHORT_SUM = 4


def _product(a: Tensor, b: Tensor) -> Tensor:
    """a @ b. Over an inner dimension of at most SHORT_SUM (attention's sums over the 3 positions)
    as outer products added in order: what MKL computes for such tiny batched products here, bit
    for bit (tests/test_twins.py), in about half its time. Built as its transpose when that has
    the longer rows (the products commute, the order of the sum is the same)."""
    if a.shape[-1] > SHORT_SUM:
        return a @ b
    if a.shape[-2] > b.shape[-1]:
        return _outer_sum(b.mT, a.mT).mT
    return _outer_sum(a, b)


def _outer_sum(a: Tensor, b: Tensor) -> Tensor:
    out = a[..., :, :1] * b[..., :1, :]
    for t in range(1, a.shape[-1]):
        out = out + a[..., :, t : t + 1] * b[..., t : t + 1, :]
    return out


class _MatMul(torch.autograd.Function):
    """a @ b whose backward products (a sum over positions for one of them) go through _product."""

    @staticmethod
    def forward(ctx, a: Tensor, b: Tensor) -> Tensor:
        ctx.save_for_backward(a, b)
        return _product(a, b)

    @staticmethod
    def backward(ctx, grad: Tensor):
        a, b = ctx.saved_tensors
        return _product(grad, b.mT), _product(a.mT, grad)


def attention(q: Tensor, k: Tensor, v: Tensor, n_head: int, causal: bool = False) -> Tensor:
    """Explicit softmax attention (matmul, scale, softmax, matmul), no mask, no fused kernel.

    q: (B, N, Tq, d); k, v: (B, N, T, d) -> (B, N, Tq, d), heads re-concatenated.
    """
    B, N, Tq, d = q.shape
    T, hd = k.shape[2], d // n_head
    q = q.view(B, N, Tq, n_head, hd).transpose(2, 3)  # (B, N, H, Tq, hd)
    k = k.view(B, N, T, n_head, hd).transpose(2, 3)   # (B, N, H, T, hd)
    v = v.view(B, N, T, n_head, hd).transpose(2, 3)
    scores = _MatMul.apply(q, k.transpose(-1, -2)) / math.sqrt(hd)  # (B, N, H, Tq, T)
    if causal:  # the char-LM's mask (§4): -inf strictly above the diagonal, before the softmax
        mask = torch.ones(Tq, T, dtype=torch.bool, device=q.device).triu(T - Tq + 1)
        scores = scores.masked_fill(mask, float("-inf"))
    y = _MatMul.apply(scores.softmax(dim=-1), v)       # (B, N, H, Tq, hd)
    return y.transpose(2, 3).reshape(B, N, Tq, d)


def mix(params: Params, i: int, h: Tensor, q: Tensor, k: Tensor, v: Tensor, cfg: ModelConfig) -> Tensor:
    """The rest of block i after its projections: attention, W_O and the MLP on the residual
    stream h (B, N, Tq, d), with queries q (B, N, Tq, d) and keys, values (B, N, T, d)."""
    p = lambda name: params[f"l{i}.{name}"]
    B, d = h.shape[0], h.shape[-1]
    y = attention(q, k, v, cfg.n_head, cfg.causal).reshape(B, -1, d)  # (B, N·Tq, d)
    h = h + linear(y, p("W_O")).view(h.shape)
    x = rms(h, p("g2")).reshape(B, -1, d)
    return h + linear(silu(linear(x, p("W_1"))), p("W_2")).view(h.shape)


def silu(x: Tensor) -> Tensor:
    """SiLU, per run unless every run's slice is a whole number of SIMD blocks: a vectorised
    kernel computes the trailing remainder of a tensor with the scalar exp, which rounds
    differently, so a run's numbers must not depend on where its slice ends (optim.per_run_map)."""
    if (x.numel() // x.shape[0]) % 64 == 0:
        return F.silu(x)
    return torch.stack([F.silu(row) for row in x])


def layer(params: Params, i: int, h: Tensor, cfg: ModelConfig, last_only: bool = False) -> Tensor:
    """One pre-norm block on h (B, N, T, d). ``last_only``: return the last position only
    (B, N, 1, d), computing queries, W_O and the MLP there alone (the keys and values still see
    every position). Used for the top layer when only the last position is read out."""
    p = lambda name: params[f"l{i}.{name}"]
    B, N, T, d = h.shape
    a = rms(h, p("g1")).view(B, N * T, d)
    k = linear(a, p("W_K")).view(B, N, T, d)
    v = linear(a, p("W_V")).view(B, N, T, d)
    if last_only:
        h = h[:, :, -1:]                                         # (B, N, 1, d)
        a = a.view(B, N, T, d)[:, :, -1]                         # (B, N, d)
    q = linear(a, p("W_Q")).view(B, N, -1, d)
    return mix(params, i, h, q, k, v, cfg)


def embedding_table(params: Params, T: int) -> Tensor:
    """E[v] + pos[t] for every (token v, position t): (B, vocab_in·T, d), row v·T + t."""
    E, pos = params["E"], params["pos"]                          # (B, V_in, d), (B, 1, n_ctx, d)
    return (E.unsqueeze(2) + pos[:, :, :T]).flatten(1, 2)


def embed(params: Params, tokens: Tensor, cfg: ModelConfig) -> Tensor:
    """E[x] + pos[:, :T] for tokens (N, T) shared by the runs -> (B, N, T, d). ``embed="onehot"``
    computes E[x] as one_hot(x) @ E (float64 suite: a deterministic backward on CUDA)."""
    E, pos = params["E"], params["pos"]                          # (B, V_in, d), (B, 1, n_ctx, d)
    (B, V, d), (N, T) = E.shape, tokens.shape
    if cfg.embed == "onehot":
        onehot = F.one_hot(tokens.reshape(-1), V).to(E.dtype)   # (N·T, V_in)
        h = onehot.expand(B, N * T, V) @ E
    else:
        h = E[:, tokens.reshape(-1)]
    return h.view(B, N, T, d) + pos[:, :, :T]


def forward(params: Params, tokens: Tensor, cfg: ModelConfig) -> Tensor:
    """Logits of every run for tokens (N, T) shared by the runs: (B, N, vocab_out) with
    ``readout="last"`` (mod task, §3.1), (B, N, T, vocab_out) with ``readout="all"`` (char-LM)."""
    if cfg.embed == "index" and cfg.readout == "last" and not cfg.causal:
        return _forward_last(params, tokens, cfg)
    h = embed(params, tokens, cfg)                               # (B, N, T, d)
    for i in range(cfg.n_layer):
        h = layer(params, i, h, cfg, last_only=cfg.readout == "last" and i == cfg.n_layer - 1)
    if cfg.readout == "last":
        return linear(rms(h[:, :, -1], params["g_f"]), params["W_out"])  # (B, N, vocab_out)
    B, N, T, d = h.shape
    return linear(rms(h, params["g_f"]).view(B, N * T, d), params["W_out"]).view(B, N, T, -1)


def _forward_last(params: Params, tokens: Tensor, cfg: ModelConfig) -> Tensor:
    """The CPU mod model's forward (index embedding, last-position read-out, no mask), with two
    evaluation shortcuts that leave the function unchanged: (1) before its attention, layer 0
    sees only E[token] + pos[position], so its norm and projections are evaluated once per
    (token, position) pair of the embedding table and gathered (the mod task has 48·3 pairs for
    883·3 inputs); (2) the top layer is evaluated at the last position only, all the read-out
    needs. Together they cut about 40% of the matrix-multiply flops (benchmarks/bench_twins.py)."""
    N, T = tokens.shape
    table = embedding_table(params, T)                           # (B, V_in·T, d)
    B, d = table.shape[0], table.shape[-1]
    rows = (tokens * T + torch.arange(T, device=tokens.device)).reshape(-1)  # (N·T,)
    gather = lambda x: x.index_select(1, rows).view(B, N, T, d)
    a = rms(table, params["l0.g1"])
    q, k, v = (gather(linear(a, params[f"l0.{name}"])) for name in ("W_Q", "W_K", "W_V"))
    h = gather(table)                                            # (B, N, T, d)
    if cfg.n_layer == 1:
        h, q = h[:, :, -1:], q[:, :, -1:]
    h = mix(params, 0, h, q, k, v, cfg)
    for i in range(1, cfg.n_layer):
        h = layer(params, i, h, cfg, last_only=i == cfg.n_layer - 1)
    return linear(rms(h[:, :, -1], params["g_f"]), params["W_out"])  # (B, N, vocab_out)


def loss(logits: Tensor, labels: Tensor) -> Tensor:
    """Mean cross-entropy per run: logits (B, N, V), labels (N,) -> (B,)."""
    B, N, V = logits.shape
    return F.cross_entropy(logits.reshape(B * N, V), labels.repeat(B), reduction="none").view(B, N).mean(dim=1)


def manual_loss(logits: Tensor, labels: Tensor) -> Tensor:
    """The float64 suite's written-out cross-entropy (§4), per run: −mean over every (example[,
    position]) of Σ_v log_softmax(z)_v · onehot(y)_v. logits (B, N[, T], V), labels (N[, T]) -> (B,).
    The library cross-entropy is avoided for a deterministic CUDA backward."""
    B, V = logits.shape[0], logits.shape[-1]
    target = F.one_hot(labels, V).to(logits.dtype)
    return -(logits.log_softmax(dim=-1) * target).sum(dim=-1).reshape(B, -1).mean(dim=1)
