"""The key of a twin run (spec: attention.md §10), without torch: one encoding of a pair for the
config, the rules, the engine and the tables alike.

A :class:`Pair` is (optimizer, twin, init seed, twin seed, sigma); with the settings it determines
the run completely. Its ``row`` is how a rule passes it (plain values Snakemake can hash),
``variant`` the twin with its scale as a path component; pairs that share copy 1 (one optimizer
and init seed, :func:`base_of`) are trained once for all of them (:func:`by_base`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..optim import cards

TWINS = ("gauge", "identity", "noise")
NOISE_SEED = 888


@dataclass(frozen=True)
class Pair:
    """The key of one twin run (§10): with the settings, it determines the run completely."""

    optimizer: str
    twin: str
    init_seed: int
    twin_seed: int      # the gauge seed; 888 for noise; 0 for identity
    sigma: float = 0.0  # noise scale (noise twins only)

    def __post_init__(self):
        optimizers = cards.twin_optimizers()
        if self.optimizer not in optimizers:
            raise ValueError(f"unknown twin optimizer {self.optimizer!r}; use one of {optimizers}")
        if self.twin not in TWINS:
            raise ValueError(f"unknown twin {self.twin!r}; use one of {TWINS}")
        if (self.twin == "noise") != (self.sigma > 0):
            raise ValueError(f"{self.twin} twin with sigma {self.sigma}: only noise twins have sigma > 0")

    @classmethod
    def of(cls, optimizer: str, twin: str, init: int, seed: int | None = None, sigma: float = 0.0) -> Pair:
        """A pair with the protocol's twin seed filled in (0 for identity, 888 for noise)."""
        default = {"identity": 0, "noise": NOISE_SEED}.get(twin)
        if seed is None and default is None:
            raise ValueError(f"a {twin} twin needs its twin seed (the seed of the gauge draw)")
        return cls(optimizer, twin, int(init), int(default if seed is None else seed), float(sigma))

    @classmethod
    def listed(cls, entries: list[dict]) -> list[Pair]:
        """A config's list of pairs (a twin set, Table 9's pairs, the merging extension's: keys
        optimizer, twin, init, and seed and sigma where needed) as pairs, in listed order, each
        once: the one reading of a configured pair."""
        return list(dict.fromkeys(cls.of(p["optimizer"], p["twin"], p["init"], p.get("seed"), p.get("sigma", 0.0))
                                  for p in entries))

    @classmethod
    def from_row(cls, row) -> Pair:
        """A pair from a rule's params row, [optimizer, twin, init, twin seed, sigma]."""
        optimizer, twin, init, seed, sigma = row
        return cls(optimizer, twin, int(init), int(seed), float(sigma))

    @property
    def row(self) -> list:
        """The pair as a rule's params row (from_row reads it back): plain values Snakemake can hash."""
        return [self.optimizer, self.twin, self.init_seed, self.twin_seed, self.sigma]

    @property
    def variant(self) -> str:
        """The twin with its scale: ``gauge``, ``identity``, ``noise1e-07`` (a path component)."""
        return f"noise{self.sigma:g}" if self.twin == "noise" else self.twin

    def __str__(self) -> str:
        return f"{self.optimizer} {self.variant} twin (init {self.init_seed}, twin seed {self.twin_seed})"


def parse_variant(variant: str) -> tuple[str, float]:
    """Inverse of :attr:`Pair.variant`: ``noise1e-07`` -> ("noise", 1e-7)."""
    if variant.startswith("noise"):
        return "noise", float(variant[len("noise"):])
    return variant, 0.0


def base_of(pair: Pair) -> tuple[str, int]:
    """What a pair's copy 1 depends on besides the settings: its optimizer and init seed. Pairs
    that share it share copy 1, which a batched job trains once for all of them."""
    return pair.optimizer, pair.init_seed


def by_base(pairs: list[Pair]) -> dict[tuple[str, int], list[Pair]]:
    """The pairs, each once, grouped by :func:`base_of`; groups and pairs in first-listed order."""
    groups: dict[tuple[str, int], list[Pair]] = {}
    for pair in dict.fromkeys(pairs):
        groups.setdefault(base_of(pair), []).append(pair)
    return groups


def in_parts(groups: dict[tuple[str, int], list[Pair]], most: int) -> dict[str, list[Pair]]:
    """Each group of :func:`by_base` as jobs of at most ``most`` pairs, named
    ``<optimizer>_init<seed>`` (``..._part<k>`` where a group needs more than one), near equal in
    size and in listed order. A part trains its copy 1 again: a longer group costs one more copy 1
    per part, so that no job is much longer than the others."""
    jobs = {}
    for (optimizer, init), pairs in groups.items():
        count = -(-len(pairs) // most)
        name = f"{optimizer}_init{init}"
        for k in range(count):
            part = pairs[k * len(pairs) // count:(k + 1) * len(pairs) // count]
            jobs[name if count == 1 else f"{name}_part{k}"] = part
    return jobs


def one_base(pairs: list[Pair]) -> tuple[str, int]:
    """The shared copy 1 (:func:`base_of`) of a batch of distinct pairs, or a ValueError."""
    if not pairs or len({base_of(p) for p in pairs}) != 1 or len(set(pairs)) != len(pairs):
        raise ValueError(f"one batch is distinct pairs of one optimizer and init seed: {[str(p) for p in pairs]}")
    return base_of(pairs[0])
