"""The attention models' configurations (spec: attention.md §2) and Table 9's table of them,
without torch: the tables, the configuration's checks and the workflow's parse read them.

:class:`ModelConfig` is one row of §2; :data:`CONFIGS` holds Table 9's float64 configurations in
its block order, each with its step budget (:data:`STEPS`), its label in the table
(:data:`LABELS`) and its short name (:data:`SHORT`). The config schema lists the same names
(``table9.configs``); a test holds the two equal.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

CONTEXT = 128  # the char-LM's window (attention.md §5.2)


@dataclass(frozen=True)
class ModelConfig:
    """One row of attention.md §2."""

    name: str
    vocab_in: int
    vocab_out: int
    n_layer: int  # L
    d: int
    n_head: int   # H
    n_ctx: int
    readout: str = "last"  # "last": logits of the last ("=") position only (mod task); "all": every position (char-LM)
    embed: str = "index"   # "index": E[x]; "onehot": one_hot(x) @ E (float64 suite, deterministic backward)
    causal: bool = False   # additive -inf strictly above the diagonal of the scores (char-LM)

    @property
    def hd(self) -> int:
        return self.d // self.n_head

    @property
    def mlp(self) -> int:
        return 4 * self.d


def mod_config(P: int = 47, n_layer: int = 2, d: int = 64, n_head: int = 4, prefix: str = "cpu") -> ModelConfig:
    """The mod-P model: vocab P + 1 in ("=" is token P), P out, 3 positions."""
    return ModelConfig(f"{prefix}-mod{P}-L{n_layer}d{d}h{n_head}", P + 1, P, n_layer, d, n_head, 3)


CPU_MOD47 = mod_config()  # cpu-mod47-L2d64h4: Table 3, Figure 2, Appendix D.5 (104,896 parameters)


def _mod(P: int, L: int, d: int, H: int) -> ModelConfig:
    return replace(mod_config(P, L, d, H, prefix="f64"), embed="onehot")


# The float64 configurations of §2 in Table 9's block order, with their step budgets and labels.
CONFIGS: dict[str, ModelConfig] = {c.name: c for c in (
    _mod(47, 2, 64, 4),
    _mod(97, 4, 128, 8),
    _mod(97, 6, 256, 8),
    ModelConfig("f64-text-L6d256h8", 65, 65, 6, 256, 8, CONTEXT, readout="all", embed="onehot", causal=True),
)}
STEPS = {"f64-mod47-L2d64h4": 1500, "f64-mod97-L4d128h8": 2000, "f64-mod97-L6d256h8": 2000, "f64-text-L6d256h8": 3000}
LABELS = {"f64-mod47-L2d64h4": "mod p47 L2 d64 h4 s1500", "f64-mod97-L4d128h8": "mod p97 L4 d128 h8 s2000",
          "f64-mod97-L6d256h8": "mod p97 L6 d256 h8 s2000", "f64-text-L6d256h8": "text L6 d256 h8 s3000"}
TEXT = "f64-text-L6d256h8"
SHORT = {"f64-mod47-L2d64h4": "2L/d64", "f64-mod97-L4d128h8": "4L/d128", "f64-mod97-L6d256h8": "6L/d256",
         "f64-text-L6d256h8": "char-LM"}
CHECKPOINTS = (0, 1, 10, 50, 100, 300, 600, 1000, 1500, 2000, 3000)


def config(name: str) -> ModelConfig:
    """The configuration named ``name``; an unknown name fails, listing the known ones (the
    lookup has the form of ``cards.card``'s, for another table)."""
    try:
        return CONFIGS[name]
    except KeyError:
        raise ValueError(f"unknown float64 configuration {name!r}; use one of {list(CONFIGS)}") from None
