"""Gauge symmetries of a real model, found from its structure.

A gauge is a change of an internal basis that the function does not see. Three kinds occur in
transformers and adapters; each acts by rotating ``dim`` coordinates of some parameter slices
by one orthogonal matrix A (an :class:`Orbit`), and keeps every product LᵀR of its factor pairs:

* ``qk``: per head (per key/value head under grouped-query attention), (W_Q^h, W_K^h) ↦
  (A W_Q^h, A W_K^h), so every score (W_Q x)ᵀ(W_K x′) is kept (attention.md §1). ``qk+bias``
  moves the projection biases along, (A b_Q, A b_K): biased attention (GPT-2's ``c_attn``) has
  this larger action; the weight-only one of Definition 3.1 is then reported absent, with the
  measured difference. With rotary position embeddings only the rotations that commute with
  RoPE's position-dependent 2×2 rotations are kept: ``qk-rope``, an SO(2) angle per frequency
  pair (i, i + hd/2), HF's rotate-half convention.
* ``vo``: per (key/value) head, (W_V^h, W_O[:, h]) ↦ (A W_V^h, W_O[:, h] Aᵀ); the attention
  weights sum to one, so they commute with A (``vo+bias``: b_V^h ↦ A b_V^h too).
* ``lora``: a low-rank adapter's pair (B, A) ↦ (B Qᵀ, Q A), Q ∈ O(r), keeps B·A.

"Rotate along an axis" is the one primitive: for a slice with its ``dim``-long axis moved first
(dim, *), X ↦ A X. Row blocks of an (out, in) weight rotate along axis 0; column blocks (an
(in, out) Conv1D weight, the output projection's head columns, LoRA's B) along axis 1.

Detection knows ``nn.MultiheadAttention`` (fused ``in_proj_weight`` or separate projections,
``bias_k``), GPT-2-style fused ``c_attn``/``c_proj`` (Conv1D), separate ``q_proj``/``k_proj``/
``v_proj``/``o_proj`` (LLaMA and the like, RoPE when the model has a rotary embedding, qk-norm
when the attention has ``q_norm``/``k_norm``) and ``lora_A``/``lora_B`` pairs (plain or peft's
per-adapter dicts). :mod:`gaugelab.tools.audit` verifies every candidate numerically.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from ..core import gauge
from ..core import portable


@dataclass(frozen=True)
class Slice:
    """``dim`` coordinates of parameter ``param`` from ``start`` along ``axis``."""

    param: str
    axis: int
    start: int


@dataclass
class Orbit:
    """One rotation: the slices it moves, and the factor pairs (L, R) whose LᵀR it keeps (each
    side: its slices as (dim, *) matrices, concatenated column-wise)."""

    slices: list[Slice]
    pairs: list[tuple[list[Slice], list[Slice]]]


@dataclass
class Group:
    """Where a symmetry acts in one module: its orbits, each a rotation of size ``dim``."""

    module: str
    dim: int
    orbits: list[Orbit]
    rope: bool = False  # rotations restricted to SO(2) per frequency pair (i, i + dim/2)

    def params(self) -> list[str]:
        return sorted({s.param for o in self.orbits for s in o.slices})


@dataclass
class Candidate:
    """A symmetry the structure suggests: a kind, its groups, and the structural reason it may
    not hold (``breaks``; verification decides)."""

    name: str
    groups: list[Group]
    breaks: str | None = None
    notes: list[str] = field(default_factory=list)


# --- the action ---------------------------------------------------------------------------------


def _block(t: Tensor, s: Slice, dim: int) -> Tensor:
    return t.narrow(s.axis, s.start, dim).movedim(s.axis, 0).reshape(dim, -1)  # (dim, *)


def factor(params: dict[str, Tensor], slices: list[Slice], dim: int) -> Tensor:
    """One side of a pair: its slices as (dim, *) matrices side by side."""
    return torch.cat([_block(params[s.param], s, dim) for s in slices], dim=1)


def rotate(params: dict[str, Tensor], groups: list[Group], rotations: list[list[Tensor]]) -> dict[str, Tensor]:
    """A copy of ``params`` with every orbit's slices rotated by its matrix (``rotations[g][o]``)."""
    touched = {s.param for g in groups for o in g.orbits for s in o.slices}
    out = {n: (p.detach().clone() if n in touched else p) for n, p in params.items()}
    for group, mats in zip(groups, rotations):
        for orbit, a in zip(group.orbits, mats):
            for s in orbit.slices:
                view = out[s.param].narrow(s.axis, s.start, group.dim)
                moved = view.movedim(s.axis, 0)
                view.copy_((a @ moved.reshape(group.dim, -1)).reshape(moved.shape).movedim(0, s.axis))
    return out


def pair_rotation(angles: Tensor) -> Tensor:
    """The dim×dim rotation by angle φ_i in each plane (i, i + dim/2): commutes with RoPE."""
    half = angles.numel()
    c, s = portable.scalar_map(math.cos, angles), portable.scalar_map(math.sin, angles)
    a = torch.zeros(2 * half, 2 * half, dtype=angles.dtype)
    i = torch.arange(half)
    a[i, i], a[i + half, i + half], a[i, i + half], a[i + half, i] = c, c, -s, s
    return a


def draw(groups: list[Group], generator: torch.Generator, dtype: torch.dtype, identity: bool = False):
    """A random element per orbit (Haar on O(dim), or SO(2) angles per pair under RoPE); the
    identity through the same path when ``identity`` (angles 0: cos = 1, sin = 0 exactly)."""
    out = []
    for g in groups:
        mats = []
        for _ in g.orbits:
            if g.rope:
                angles = 2 * torch.pi * torch.rand(g.dim // 2, generator=generator, dtype=dtype)
                mats.append(pair_rotation(angles * (0 if identity else 1)))
            else:
                mats.append(torch.eye(g.dim, dtype=dtype) if identity
                            else gauge.haar_orthogonal(g.dim, generator, dtype))
        out.append(mats)
    return out


def invariants(params: dict[str, Tensor], group: Group) -> Tensor:
    """Everything the group's rotations keep, flattened: LᵀR per pair (and, under RoPE, per
    frequency pair i: L_iᵀR_i and L_iᵀ J R_i, J the 90° rotation)."""
    pieces = []
    for orbit in group.orbits:
        for left, right in orbit.pairs:
            lf, rf = factor(params, left, group.dim), factor(params, right, group.dim)  # (dim, *)
            if not group.rope:
                pieces.append((lf.mT @ rf).reshape(-1))
                continue
            half = group.dim // 2
            l1, l2, r1, r2 = lf[:half], lf[half:], rf[:half], rf[half:]  # (half, *)
            pieces.append(torch.einsum("ia,ib->iab", l1, r1) + torch.einsum("ia,ib->iab", l2, r2))
            pieces.append(torch.einsum("ia,ib->iab", l1, r2) - torch.einsum("ia,ib->iab", l2, r1))
    return torch.cat([p.reshape(-1) for p in pieces])


# --- detection ----------------------------------------------------------------------------------


@dataclass
class _Heads:
    """One attention module, normalised: where its q, k, v and output head blocks live."""

    module: str
    n_head: int
    n_kv: int
    hd: int
    q: list[Slice]  # per query head: weight slice
    k: list[Slice]  # per kv head
    v: list[Slice]
    o: list[Slice]  # per kv head's query heads: output columns (per query head)
    bq: list[Slice] | None = None
    bk: list[Slice] | None = None
    bv: list[Slice] | None = None
    extra_k: list[Slice] | None = None  # bias_k: an extra key per head
    extra_v: list[Slice] | None = None
    rope: bool = False
    qk_norm: str | None = None


def _per(name: str, axis: int, offset: int, count: int, hd: int) -> list[Slice]:
    return [Slice(name, axis, offset + h * hd) for h in range(count)]


def _mha(prefix: str, m: nn.MultiheadAttention) -> _Heads:
    e, h, hd = m.embed_dim, m.num_heads, m.head_dim
    if m._qkv_same_embed_dim:
        w = f"{prefix}in_proj_weight"
        q, k, v = _per(w, 0, 0, h, hd), _per(w, 0, e, h, hd), _per(w, 0, 2 * e, h, hd)
    else:
        q, k, v = (_per(f"{prefix}{n}_proj_weight", 0, 0, h, hd) for n in "qkv")
    heads = _Heads(prefix.rstrip(".") or "(root)", h, h, hd, q, k, v, _per(f"{prefix}out_proj.weight", 1, 0, h, hd))
    if m.in_proj_bias is not None:
        b = f"{prefix}in_proj_bias"
        heads.bq, heads.bk, heads.bv = _per(b, 0, 0, h, hd), _per(b, 0, e, h, hd), _per(b, 0, 2 * e, h, hd)
    if m.bias_k is not None:
        heads.extra_k, heads.extra_v = _per(f"{prefix}bias_k", 2, 0, h, hd), _per(f"{prefix}bias_v", 2, 0, h, hd)
    return heads


def _fused_conv1d(prefix: str, m: nn.Module) -> _Heads:
    """GPT-2's attention: c_attn a Conv1D (in, out) = (d, 3d) holding q | k | v columns."""
    h, d = m.num_heads, m.embed_dim
    hd = d // h
    w, b = f"{prefix}c_attn.weight", f"{prefix}c_attn.bias"
    heads = _Heads(prefix.rstrip(".") or "(root)", h, h, hd, _per(w, 1, 0, h, hd), _per(w, 1, d, h, hd),
                   _per(w, 1, 2 * d, h, hd), _per(f"{prefix}c_proj.weight", 0, 0, h, hd))
    if getattr(m.c_attn, "bias", None) is not None:
        heads.bq, heads.bk, heads.bv = _per(b, 0, 0, h, hd), _per(b, 0, d, h, hd), _per(b, 0, 2 * d, h, hd)
    return heads


def _separate(prefix: str, m: nn.Module, rope: bool) -> _Heads:
    """q_proj/k_proj/v_proj/o_proj (out, in) linears; grouped-query heads from the shapes."""
    hd = getattr(m, "head_dim", None) or m.config.hidden_size // m.config.num_attention_heads
    h, kv = m.q_proj.weight.shape[0] // hd, m.k_proj.weight.shape[0] // hd
    p = prefix
    heads = _Heads(p.rstrip(".") or "(root)", h, kv, hd, _per(f"{p}q_proj.weight", 0, 0, h, hd),
                   _per(f"{p}k_proj.weight", 0, 0, kv, hd), _per(f"{p}v_proj.weight", 0, 0, kv, hd),
                   _per(f"{p}o_proj.weight", 1, 0, h, hd), rope=rope)
    for side, lin in (("bq", m.q_proj), ("bk", m.k_proj), ("bv", m.v_proj)):
        if lin.bias is not None:
            setattr(heads, side, _per(f"{p}{side[1]}_proj.bias", 0, 0, lin.bias.shape[0] // hd, hd))
    norms = [n for n in ("q_norm", "k_norm") if isinstance(getattr(m, n, None), nn.Module)]
    if norms:
        heads.qk_norm = f"qk-norm ({', '.join(f'{p}{n}' for n in norms)}) normalises each head with per-dimension gains"
    return heads


def _has_rope(model: nn.Module) -> bool:
    return any("rotary" in type(mod).__name__.lower() or name.endswith("rotary_emb")
               for name, mod in model.named_modules())


def attention_modules(model: nn.Module) -> list[_Heads]:
    rope = _has_rope(model)
    found = []
    for name, m in model.named_modules():
        prefix = f"{name}." if name else ""
        if isinstance(m, nn.MultiheadAttention):
            found.append(_mha(prefix, m))
        elif all(hasattr(m, a) for a in ("c_attn", "c_proj", "num_heads", "embed_dim")) \
                and not getattr(m, "is_cross_attention", False):
            found.append(_fused_conv1d(prefix, m))
        elif all(isinstance(getattr(m, a, None), nn.Linear) for a in ("q_proj", "k_proj", "v_proj", "o_proj")):
            found.append(_separate(prefix, m, rope))
    return found


def _qk_group(a: _Heads, with_bias: bool, rope: bool) -> Group:
    per = a.n_head // a.n_kv
    orbits = []
    for g in range(a.n_kv):
        mine = range(g * per, (g + 1) * per)
        k_side = ([a.k[g]] + ([a.bk[g]] if with_bias and a.bk else [])
                  + ([a.extra_k[g]] if with_bias and a.extra_k else []))
        q_sides = [[a.q[h]] + ([a.bq[h]] if with_bias and a.bq else []) for h in mine]
        slices = k_side + [s for side in q_sides for s in side]
        orbits.append(Orbit(slices, [(q, k_side) for q in q_sides]))
    return Group(a.module, a.hd, orbits, rope=rope)


def _vo_group(a: _Heads, with_bias: bool) -> Group:
    per = a.n_head // a.n_kv
    orbits = []
    for g in range(a.n_kv):
        v_side = ([a.v[g]] + ([a.bv[g]] if with_bias and a.bv else [])
                  + ([a.extra_v[g]] if with_bias and a.extra_v else []))
        outs = [a.o[h] for h in range(g * per, (g + 1) * per)]
        orbits.append(Orbit(v_side + outs, [([o], v_side) for o in outs]))
    return Group(a.module, a.hd, orbits)


def _lora_groups(model: nn.Module) -> list[Group]:
    groups = []
    for name, m in model.named_modules():
        a, b = getattr(m, "lora_A", None), getattr(m, "lora_B", None)
        if a is None or b is None:
            continue
        prefix = f"{name}." if name else ""
        pairs = ([("", a, b)] if isinstance(a, nn.Linear) else
                 [(f".{k}", a[k], b[k]) for k in a if k in b] if isinstance(a, nn.ModuleDict) else [])
        for key, la, _ in pairs:
            r = la.weight.shape[0]
            left = [Slice(f"{prefix}lora_B{key}.weight", 1, 0)]
            right = [Slice(f"{prefix}lora_A{key}.weight", 0, 0)]
            if la.bias is not None:
                right.append(Slice(f"{prefix}lora_A{key}.bias", 0, 0))
            groups.append(Group(f"{prefix}lora{key}".rstrip("."), r, [Orbit(left + right, [(left, right)])]))
    return groups


# Every candidate's name, in the order :func:`candidates` lists them (the audit's --symmetry).
NAMES = ("qk", "qk+bias", "qk-rope", "vo", "vo+bias", "lora")


def candidates(model: nn.Module) -> list[Candidate]:
    """Every symmetry the structure suggests, weight-only first; biases, RoPE and qk-norm are
    named as the reason a candidate may fail (:mod:`gaugelab.tools.audit` measures it)."""
    heads = attention_modules(model)
    out: list[Candidate] = []
    if heads:
        biased_qk = [a.module for a in heads if a.bq or a.bk or a.extra_k]
        biased_v = [a.module for a in heads if a.bv or a.extra_v]
        rope = [a.module for a in heads if a.rope]
        norms = [a.qk_norm for a in heads if a.qk_norm]
        qk_break = []
        if biased_qk:
            qk_break.append(f"query/key biases in {', '.join(biased_qk)} are not moved by the weight-only "
                            "action of Definition 3.1 (qk+bias moves them along)")
        if rope:
            qk_break.append("rotary position embeddings rotate each frequency pair by a position-dependent angle; "
                            "a general O(hd) rotation does not commute with them (qk-rope keeps only those that do)")
        if norms:
            qk_break.append("; ".join(norms))
        out.append(Candidate("qk", [_qk_group(a, False, False) for a in heads], "; ".join(qk_break) or None))
        if biased_qk:
            out.append(Candidate("qk+bias", [_qk_group(a, True, False) for a in heads],
                                 "; ".join(norms + (qk_break[1:2] if rope else [])) or None))
        if rope:
            out.append(Candidate("qk-rope", [_qk_group(a, bool(biased_qk), True) for a in heads],
                                 "; ".join(norms) or None, ["SO(2) per frequency pair (i, i + hd/2)"]))
        out.append(Candidate("vo", [_vo_group(a, False) for a in heads],
                             f"value biases in {', '.join(biased_v)} are not moved by the weight-only action "
                             "(vo+bias moves them along)" if biased_v else None))
        if biased_v:
            out.append(Candidate("vo+bias", [_vo_group(a, True) for a in heads]))
    lora = _lora_groups(model)
    if lora:
        out.append(Candidate("lora", lora))
    return out
