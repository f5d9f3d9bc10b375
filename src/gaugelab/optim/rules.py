"""Functional optimizers, registered by name: state in, increments and new state out.

Every tensor carries a leading *run* dimension: a parameter of shape (n, k) is passed as
(B, n, k), where B runs advance together (one run is B = 1). Reductions that a rule pools
(scalar-Adam's scalar, Muon's norm, Adafactor's mean) therefore never cross runs. The learning
rate is a Python float or a float64 tensor of shape (B,), one value per run.

Each rule is ``update(grads, state, lr, t) -> (deltas, new_state)``: the caller adds the deltas
(P <- P + delta). The step counter t starts at 1. One definition of each rule serves the sensing
zoo, the attention twins and the property tests (spec: sensing.md §3, identities.md §3.2).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import torch
from torch import Tensor

from ..core import portable

BETA1, BETA2, EPS = 0.9, 0.999, 1e-8

State = dict[str, list[Tensor]]
Update = Callable[[Sequence[Tensor], State, "float | Tensor", int], tuple[list[Tensor], State]]


@dataclass(frozen=True)
class Rule:
    """An optimizer: its name, a-priori class and its functional update."""

    name: str
    equivariant: bool
    init: Callable[[Sequence[Tensor]], State]
    update: Update
    hparams: dict = field(default_factory=dict)
    # How a rule's parameters may be batched without changing a bit. "entry": it works entry by
    # entry, so any parameters may be concatenated into one flat tensor. "matrix": it works per
    # matrix (the last two dimensions) through matrix products and whole-matrix norms, so
    # parameters of one shape may be stacked into one (B, P, n, k) tensor (checked: the zoo's
    # records are byte-identical stacked and unstacked). "": one by one; the rule pools over
    # parameters (scalar-Adam, Adam-p) or reduces along a matrix's rows or columns, whose rounding
    # follows the memory layout (Adafactor).
    batching: str = ""

    @property
    def stackable(self) -> bool:
        """Parameters of one shape may be stacked into one tensor."""
        return self.batching in ("entry", "matrix")


def per_run(lr: float | Tensor, like: Tensor) -> float | Tensor:
    """Broadcast a per-run learning rate (shape (B,)) against a (B, ...) tensor."""
    if isinstance(lr, Tensor):
        return lr.to(like.dtype).view(-1, *([1] * (like.dim() - 1)))
    return lr


def run_sum(x: Tensor) -> Tensor:
    """Sum over every dimension but the run dimension: shape (B,)."""
    return x.reshape(x.shape[0], -1).sum(dim=1)


def _zeros(params: Sequence[Tensor], *names: str) -> State:
    return {name: [torch.zeros_like(p) for p in params] for name in names}


# --- equivariant rules --------------------------------------------------------------------------


def gd() -> Rule:
    def update(grads, state, lr, t):
        return [-(per_run(lr, g) * g) for g in grads], state

    return Rule("gd", True, lambda params: {}, update, batching="entry")


def momentum(beta: float = 0.9) -> Rule:
    """Heavy ball: b <- beta b + g (no dampening), delta = -lr b."""

    def update(grads, state, lr, t):
        bufs = [beta * b + g for b, g in zip(state["b"], grads)]
        return [-(per_run(lr, b) * b) for b in bufs], {"b": bufs}

    return Rule("momentum", True, lambda params: _zeros(params, "b"), update, {"beta": beta}, batching="entry")


def _adam_moments(grads, state, t, beta1, beta2):
    ms = [beta1 * m + (1 - beta1) * g for m, g in zip(state["m"], grads)]
    vs = [beta2 * v + (1 - beta2) * g * g for v, g in zip(state["v"], grads)]
    mhat = [m / (1 - beta1**t) for m in ms]
    vhat = [v / (1 - beta2**t) for v in vs]
    return {"m": ms, "v": vs}, mhat, vhat


def scalar_adam(beta1: float = BETA1, beta2: float = BETA2, eps: float = EPS) -> Rule:
    """Adam with one shared denominator per run: sqrt(mean of v-hat over all entries of all
    parameters) + eps. The pooled sum is accumulated in float64 from the per-parameter sums."""

    def update(grads, state, lr, t):
        new, mhat, vhat = _adam_moments(grads, state, t, beta1, beta2)
        total = sum(run_sum(v).double() for v in vhat)
        count = sum(v[0].numel() for v in vhat)
        scale = lr / (portable.sqrt(total / count) + eps)  # float64, one per run
        return [-(per_run(scale, m) * m) for m in mhat], new

    return Rule("scalar_adam", True, lambda params: _zeros(params, "m", "v"), update,
                {"beta1": beta1, "beta2": beta2, "eps": eps})


# The quintic's coefficients (a, b, c) in X <- a X + (b S + c S^2) X, S = X X^T: Keller Jordan's
# Muon (2024), chosen so that five steps drive every singular value of a unit-norm matrix into
# about [0.7, 1.2] as fast as possible, not to converge to exactly 1: the output approximates the
# polar factor U V^T of B = U S V^T, with singular values not exactly 1 (spec: sensing.md §3.4).
NS_COEFFS = (3.4445, -4.7750, 2.0315)


def newton_schulz(b: Tensor, steps: int = 5) -> Tensor:
    """Muon's quintic Newton–Schulz map on the last two dimensions, in the input's dtype: X = B /
    (||B||_F + 1e-7), the 1e-7 outside the norm so a zero buffer maps to zero; a tall matrix is
    transposed so S = X X^T is the smaller Gram matrix; no shape-dependent rescaling, so lr is the
    raw spectral step."""
    a, bb, c = NS_COEFFS
    x = b / (torch.linalg.matrix_norm(b, keepdim=True) + 1e-7)
    tall = x.shape[-2] > x.shape[-1]
    if tall:
        x = x.mT
    shape = x.shape
    # The batched product that ``@`` folds the leading dimensions into, called directly: the
    # same kernel on the same memory (so the same bits), without ``@``'s reshaping per call.
    if x.dim() > 2:
        x = x.reshape(-1, *shape[-2:])
    product = torch.bmm if x.dim() == 3 else torch.mm
    for _ in range(steps):
        s = product(x, x.mT)
        poly = product(s, s).mul_(c).add_(s.mul_(bb))  # bb s + c s², each term rounded as written
        x = product(poly, x).add_(x.mul_(a))
    x = x.reshape(shape)
    return x.mT if tall else x


def muon(beta: float = 0.9, ns_steps: int = 5) -> Rule:
    """B <- beta B + g (no damping, no Nesterov); delta = -lr NS5(B). Every parameter is a matrix."""

    def update(grads, state, lr, t):
        bufs = [beta * b + g for b, g in zip(state["b"], grads)]
        return [-(per_run(lr, b) * newton_schulz(b, ns_steps)) for b in bufs], {"b": bufs}

    return Rule("muon", True, lambda params: _zeros(params, "b"), update,
                {"beta": beta, "ns_steps": ns_steps}, batching="matrix")


def partition(rules: dict[str, Rule], labels: Sequence[str], fixed_lr: dict[str, float] | None = None,
              name: str = "partition") -> Rule:
    """A partition of the parameters over rules, as optax's ``multi_transform``: parameter i is
    updated by ``rules[labels[i]]`` with that rule's own state (its keys prefixed ``<label>.``); a
    label in ``fixed_lr`` runs at its fixed lr, the others at the step's; one shared counter t.
    Each rule sees only its own parameters, in their order, so its update is what it would be alone."""
    labels = list(labels)
    fixed = dict(fixed_lr or {})

    def own(xs, label):
        return [x for x, mine in zip(xs, labels) if mine == label]

    def init(params):
        return {f"{label}.{key}": value
                for label, rule in rules.items() for key, value in rule.init(own(params, label)).items()}

    def update(grads, state, lr, t):
        deltas, new = {}, {}
        for label, rule in rules.items():
            mine = {key.partition(".")[2]: value for key, value in state.items() if key.partition(".")[0] == label}
            step, after = rule.update(own(grads, label), mine, fixed.get(label, lr), t)
            deltas[label] = iter(step)
            new.update({f"{label}.{key}": value for key, value in after.items()})
        return [next(deltas[label]) for label in labels], new

    hparams = {label: rule.hparams for label, rule in rules.items()} | {"fixed_lr": fixed}
    return Rule(name, all(rule.equivariant for rule in rules.values()), init, update, hparams)


def muon_hybrid(matrix: Sequence[bool], lr_aux: float = 1e-3, beta: float = 0.9, ns_steps: int = 5,
                beta1: float = BETA1, beta2: float = BETA2, eps: float = EPS) -> Rule:
    """The attention twins' Muon (Section 6; spec attention.md §6.2): a :func:`partition` of
    :func:`muon` on the parameters flagged in ``matrix`` (the attention and MLP matrices; B <- 0.9 B
    + g; delta = -lr NS5(B)) and :func:`adam` at the fixed ``lr_aux`` on the others (embeddings,
    positions, gains, head), as Muon is used in practice: its orthogonalised step is defined for
    matrices only. ``matrix[i]`` flags the i-th parameter of the list the rule is called with. Not
    in the registry: it needs the model's partition."""
    labels = ["matrix" if flag else "other" for flag in matrix]
    hybrid = partition({"matrix": muon(beta, ns_steps), "other": adam(beta1, beta2, eps)}, labels,
                       fixed_lr={"other": lr_aux}, name="muon_hybrid")
    # equivariant as the twins need it: the head gauge acts on W_Q and W_K only, which Muon updates
    return replace(hybrid, equivariant=True, hparams={"lr_aux": lr_aux, "beta": beta, "ns_steps": ns_steps,
                                                      "beta1": beta1, "beta2": beta2, "eps": eps})


# The attention twins' optimizers (cards.twin_optimizers) as the twins run them (Section 6;
# attention.md §6): matrix flags which parameters are matrices, beta is the config's momentum.
ATTENTION: dict[str, Callable[..., Rule]] = {
    "adam": lambda matrix, beta, lr_aux: adam(),
    "sgd": lambda matrix, beta, lr_aux: momentum(beta),  # the paper's SGD: heavy-ball momentum
    "scalar_adam": lambda matrix, beta, lr_aux: scalar_adam(),
    "muon": lambda matrix, beta, lr_aux: muon_hybrid(matrix, lr_aux=lr_aux, beta=beta),
}


def attention_rule(name: str, matrix: Sequence[bool], beta: float | None, lr_aux: float | None) -> Rule:
    """``name``'s rule as the attention twins run it (:data:`ATTENTION`); an unknown name fails,
    listing the known ones."""
    if name not in ATTENTION:
        raise ValueError(f"unknown twin optimizer {name!r}; known: {', '.join(ATTENTION)}")
    return ATTENTION[name](list(matrix), beta, lr_aux)


def per_run_map(fn: Callable[[Tensor], Tensor], x: Tensor) -> Tensor:
    """Apply ``fn`` to each run's slice separately. torch's vectorised and scalar pow kernels
    (SLEEF's and the C library's) round differently, and which entries fall in the scalar tail
    depends on the tensor's length; per run, a run's arithmetic does not depend on its batch."""
    return torch.stack([fn(row) for row in x])


def matrix_power(m: Tensor, p: float, floor: float = 1e-6) -> Tensor:
    """Symmetrise, eigendecompose, clamp eigenvalues below at ``floor``, raise to ``p``."""
    m = 0.5 * (m + m.mT)
    evals, evecs = torch.linalg.eigh(m)
    clamped = evals.clamp_min(floor)
    flat = clamped.reshape(-1, clamped.shape[-1])  # pow per matrix (see per_run_map)
    powered = per_run_map(lambda x: portable.power(x, p), flat).reshape(clamped.shape)
    return (evecs * powered.unsqueeze(-2)) @ evecs.mT


def shampoo(damping: float = 1.0, refresh: int = 20) -> Rule:
    """L += g gᵀ, R += gᵀ g (sums); roots (L + damping I)^(-1/4), (R + damping I)^(-1/4) are
    recomputed when (t - 1) % refresh == 0; delta = -lr L⁻ g R⁻."""

    def init(params):
        state = {"L": [], "R": [], "Linv": [], "Rinv": []}
        for p in params:
            rows, cols = p.shape[-2:]
            state["L"].append(p.new_zeros(*p.shape[:-1], rows))
            state["R"].append(p.new_zeros(*p.shape[:-2], cols, cols))
        state["Linv"] = [torch.zeros_like(x) for x in state["L"]]
        state["Rinv"] = [torch.zeros_like(x) for x in state["R"]]
        return state

    def update(grads, state, lr, t):
        ls = [m + g @ g.mT for m, g in zip(state["L"], grads)]
        rs = [r + g.mT @ g for r, g in zip(state["R"], grads)]
        if (t - 1) % refresh == 0:
            eye = lambda x: torch.eye(x.shape[-1], dtype=x.dtype, device=x.device)
            linv = [matrix_power(m + damping * eye(m), -0.25) for m in ls]
            rinv = [matrix_power(r + damping * eye(r), -0.25) for r in rs]
        else:
            linv, rinv = state["Linv"], state["Rinv"]
        deltas = [-(per_run(lr, g) * (li @ g @ ri)) for g, li, ri in zip(grads, linv, rinv)]
        return deltas, {"L": ls, "R": rs, "Linv": linv, "Rinv": rinv}

    return Rule("shampoo", True, init, update, {"damping": damping, "refresh": refresh}, batching="matrix")


# --- coordinate-wise rules ----------------------------------------------------------------------


def adam(beta1: float = BETA1, beta2: float = BETA2, eps: float = EPS) -> Rule:
    """delta = -lr m̂ / (sqrt(v̂) + eps), bias-corrected, eps outside the root."""

    def update(grads, state, lr, t):
        new, mhat, vhat = _adam_moments(grads, state, t, beta1, beta2)
        return [-(per_run(lr, m) * (m / (portable.sqrt(v) + eps))) for m, v in zip(mhat, vhat)], new

    return Rule("adam", False, lambda params: _zeros(params, "m", "v"), update,
                {"beta1": beta1, "beta2": beta2, "eps": eps}, batching="entry")


def rmsprop(alpha: float = 0.99, eps: float = EPS) -> Rule:
    """v <- alpha v + (1 - alpha) g², no bias correction; delta = -lr g / (sqrt(v) + eps)."""

    def update(grads, state, lr, t):
        vs = [alpha * v + (1 - alpha) * g * g for v, g in zip(state["v"], grads)]
        return [-(per_run(lr, g) * (g / (portable.sqrt(v) + eps))) for g, v in zip(grads, vs)], {"v": vs}

    return Rule("rmsprop", False, lambda params: _zeros(params, "v"), update,
                {"alpha": alpha, "eps": eps}, batching="entry")


def signum(beta: float = BETA1) -> Rule:
    """m <- beta m + (1 - beta) g; delta = -lr sign(m), sign(0) = 0."""

    def update(grads, state, lr, t):
        ms = [beta * m + (1 - beta) * g for m, g in zip(state["m"], grads)]
        return [-(per_run(lr, m) * torch.sign(m)) for m in ms], {"m": ms}

    return Rule("signum", False, lambda params: _zeros(params, "m"), update, {"beta": beta}, batching="entry")


def lion(beta1: float = 0.9, beta2: float = 0.99) -> Rule:
    """c = sign(beta1 m + (1 - beta1) g) before the state update; m <- beta2 m + (1 - beta2) g."""

    def update(grads, state, lr, t):
        signs = [torch.sign(beta1 * m + (1 - beta1) * g) for m, g in zip(state["m"], grads)]
        ms = [beta2 * m + (1 - beta2) * g for m, g in zip(state["m"], grads)]
        return [-(per_run(lr, c) * c) for c in signs], {"m": ms}

    return Rule("lion", False, lambda params: _zeros(params, "m"), update,
                {"beta1": beta1, "beta2": beta2}, batching="entry")


def adafactor_second_moment(row: Tensor, col: Tensor, tiny: float = 1e-30) -> Tensor:
    """Rank-one reconstruction R_i C_j / (mean(R) + tiny) of the factored second moment."""
    return row.unsqueeze(-1) * col.unsqueeze(-2) / (row.mean(dim=-1, keepdim=True).unsqueeze(-1) + tiny)


def adafactor(beta2: float = BETA2, eps: float = EPS, tiny: float = 1e-30) -> Rule:
    """Factored diagonal: EMAs of row and column means of g² (no bias correction, no momentum,
    no clipping); delta = -lr g / (sqrt(v̂) + eps). ``eps`` and ``tiny`` may be 0 for tests."""

    def init(params):
        return {"R": [p.new_zeros(p.shape[:-1]) for p in params],
                "C": [p.new_zeros(*p.shape[:-2], p.shape[-1]) for p in params]}

    def update(grads, state, lr, t):
        sq = [g * g for g in grads]
        rows = [beta2 * r + (1 - beta2) * s.mean(dim=-1) for r, s in zip(state["R"], sq)]
        cols = [beta2 * c + (1 - beta2) * s.mean(dim=-2) for c, s in zip(state["C"], sq)]
        deltas = [-(per_run(lr, g) * (g / (portable.sqrt(adafactor_second_moment(r, c, tiny)) + eps)))
                  for g, r, c in zip(grads, rows, cols)]
        return deltas, {"R": rows, "C": cols}

    return Rule("adafactor", False, init, update, {"beta2": beta2, "eps": eps, "tiny": tiny})


def adam_p(p: float = 1.0, convention: str = "rms", beta1: float = BETA1, beta2: float = BETA2,
           eps: float = EPS, outer_eps: bool = True) -> Rule:
    """Adam-p, the anisotropy dial (Section 7, Algorithm 1; spec sensing.md §4).

    Adam's moments; denominator D = (s + eps)^p (s̄ + eps)^(1-p) with s = sqrt(v̂) and one scalar
    s̄ per run pooled over every entry of every parameter: ``rms`` sqrt(mean v̂) (gauge-invariant)
    or ``geo`` exp(mean log(s + eps)) (not exactly invariant); delta = -lr m̂ / (D + eps). p >= 1 is
    stock Adam, eps once. At p = 0 with ``rms`` this is scalar-Adam up to O(eps) (s̄ + 2 eps).
    Without ``outer_eps`` delta = -lr m̂ / D: the GPU port's (App. D.9's dial arm, §14.6).
    """
    if convention not in ("rms", "geo"):
        raise ValueError(f"unknown Adam-p convention {convention!r}; use 'rms' or 'geo'")

    def update(grads, state, lr, t):
        new, mhat, vhat = _adam_moments(grads, state, t, beta1, beta2)
        if p >= 1:
            return [-(per_run(lr, m) * (m / (portable.sqrt(v) + eps))) for m, v in zip(mhat, vhat)], new
        roots = [portable.sqrt(v) for v in vhat]
        count = sum(v[0].numel() for v in vhat)
        if convention == "rms":
            pooled = portable.sqrt(sum(run_sum(v) for v in vhat) / count)
        else:
            logs = sum(run_sum(portable.log(r + eps)) for r in roots)
            pooled = portable.exp(logs / count)
        scalar = per_run_map(lambda x: portable.power(x, 1 - p), (pooled + eps).unsqueeze(-1)).squeeze(-1)
        deltas = []
        for m, r in zip(mhat, roots):
            denom = per_run_map(lambda x: portable.power(x, p), r + eps) * scalar.view(-1, *([1] * (r.dim() - 1)))
            deltas.append(-(per_run(lr, m) * (m / (denom + eps if outer_eps else denom))))
        return deltas, new

    return Rule("adam_p", p <= 0 and convention == "rms", lambda params: _zeros(params, "m", "v"), update,
                {"p": p, "convention": convention, "beta1": beta1, "beta2": beta2, "eps": eps, "outer_eps": outer_eps})


# The registry: name -> factory. Each name has a card in gaugelab.optim.cards (its labels, colour, class
# and tables; tests/test_cards.py checks). The diagnostic's default target runs them in this order.
REGISTRY: dict[str, Callable[..., Rule]] = {
    "gd": gd, "momentum": momentum, "scalar_adam": scalar_adam, "muon": muon, "shampoo": shampoo, "adam": adam,
    "rmsprop": rmsprop, "signum": signum, "lion": lion, "adafactor": adafactor, "adam_p": adam_p}
EQUIVARIANT = frozenset(name for name in REGISTRY if REGISTRY[name]().equivariant)


def scaledgd(damping: float = 1e-4) -> Rule:
    """U <- U - lr G_U (VᵀV + λI)⁻¹, then V <- V - lr G_V (UᵀU + λI)⁻¹ with the updated U; λ = damping
    · mean(diag(Gram)) + 1e-12 (spec: sensing.md §3.6, the GPU ladder's control at n = 128). It needs
    the factors, which rules are not passed: its state keeps a copy, advanced by the deltas the caller
    adds (the same elementwise add, so the same bits). Its params are exactly [U, V]."""

    def step(g, p, lr):
        gram = p.mT @ p  # (B, k, k)
        lam = damping * gram.diagonal(dim1=-2, dim2=-1).mean(dim=-1) + 1e-12  # (B,)
        eye = torch.eye(gram.shape[-1], dtype=gram.dtype, device=gram.device)
        return -(per_run(lr, g) * torch.linalg.solve(gram + lam[:, None, None] * eye, g, left=False))

    def update(grads, state, lr, t):
        (u, v), (g_u, g_v) = state["P"], grads
        d_u = step(g_u, v, lr)
        d_v = step(g_v, u + d_u, lr)
        return [d_u, d_v], {"P": [u + d_u, v + d_v]}

    return Rule("scaledgd", True, lambda params: {"P": [p.clone() for p in params]}, update, {"damping": damping})


# Controls that update the two factors (U, V) jointly, so they serve the sensing testbed only: the
# diagnostic, the twins and the property tests run REGISTRY and leave them out. make() knows both.
CONTROLS: dict[str, Callable[..., Rule]] = {"scaledgd": scaledgd}


def make(name: str, **hparams) -> Rule:
    """Build a registered rule (or control) by name; unknown names fail with the list of known ones."""
    factory = REGISTRY.get(name) or CONTROLS.get(name)
    if factory is None:
        raise ValueError(f"unknown optimizer {name!r}; known: {', '.join(sorted({*REGISTRY, *CONTROLS}))}")
    return factory(**hparams)


def select_runs(state: State, index: Tensor) -> State:
    """Keep only the runs at ``index`` (a batch that lost finished runs)."""
    return {key: [x[index] for x in xs] for key, xs in state.items()}


# --- a rule applied to batched runs (the attention twins and Table 9's float64 suite) -----------


def _flatten(tensors: Sequence[Tensor]) -> Tensor:
    """(B, ...) tensors as one (B, total) tensor, run by run."""
    return torch.cat([t.detach().reshape(t.shape[0], -1) for t in tensors], dim=1)


def init_runs(rule: Rule, leaves: Sequence[Tensor]) -> State:
    """A rule's state for parameters with a leading run dimension: every buffer has it, so each run
    has its own state. A rule that works entry by entry (Adam, SGD) keeps one flat (B, total) buffer
    per moment and updates every parameter at once: the same arithmetic in a dozen operations
    instead of a dozen per parameter (on a GPU, a dozen kernel launches instead of hundreds)."""
    return rule.init([_flatten(leaves)] if rule.batching == "entry" else list(leaves))


def step_runs(leaves: Sequence[Tensor], losses: Tensor, rule: Rule, state: State, lr: float, step: int) -> State:
    """One update of every run, in place, from its loss (``losses``: (B,)): the gradient of the
    sum of the per-run losses is each run's own. Returns the new state (see :func:`init_runs`)."""
    return update_runs(leaves, torch.autograd.grad(losses.sum(), leaves), rule, state, lr, step)


def update_runs(leaves: Sequence[Tensor], grads: Sequence[Tensor], rule: Rule, state: State, lr: float,
                step: int) -> State:
    """One update of every run of ``leaves`` (parameters with a leading run dimension, or views of
    some of their runs) from its gradients, in place. Returns the new state."""
    if rule.batching == "entry":
        (delta,), state = rule.update([_flatten(grads)], state, lr, step)
        deltas = [d.view(p.shape) for d, p in zip(delta.split([p[0].numel() for p in leaves], dim=1), leaves)]
    else:
        deltas, state = rule.update(grads, state, lr, step)
    with torch.no_grad():
        for p, d in zip(leaves, deltas):
            p.add_(d)
    return state
