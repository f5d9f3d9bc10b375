"""One card per optimizer: what the tables, figures, config and command line know of it.

A rule's update lives in :mod:`gaugelab.optim` (it needs torch); everything else about it lives
here, torch-free, so the summary, table and comparison jobs start without torch. Adding an
optimizer is one rule there and one card here (docs/adding-an-optimizer.md); every name list
the engine uses derives from :data:`ALL`. ``tests/test_cards.py`` holds the cards against the
registry's rules and the config schema's enums.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Card:
    """An optimizer as the outputs show it. Rows are 1-based positions; 0 means "not in it"."""

    key: str            # the registry name, as configs, records and paths spell it
    equivariant: bool   # a-priori class: eq (commutes with the gauge) or cw (coordinate-wise)
    label: str          # Tables 2 and 6 and the figures (LaTeX)
    plain: str = ""     # the label without LaTeX (HTML tables, the comparison); default: label
    short: str = ""     # the twin tables (Table 3, Table 9, D.5, merge); default: plain
    colour: str = ""    # the figures' line and marker colour; "" draws in ink
    sensing: bool = True  # a sensing method: the config's method enum and lr-grid keys
    zoo: bool = False   # one of the paper's nine (Table 2, Figure 1)
    twin: int = 0       # row in the twin tables and the config's twin optimizer enum
    table9: int = 0     # row in Table 9
    lr_aux: bool = False  # the twins' form is a hybrid: Adam at the config's lr_aux on the non-matrices
    control: bool = False  # a control of one experiment (optim.CONTROLS): class "ctrl", in no split check

    def __post_init__(self):
        object.__setattr__(self, "plain", self.plain or self.label)
        object.__setattr__(self, "short", self.short or self.plain)


EQ, CW = True, False

# The registry keys, spelt once. Wherever the engine names one optimizer (the GD/Adam midpoint of
# the rank split, App. D.7's RMSProp arm, Section 6's Adam, Muon, SGD and scalar-Adam quantities,
# Table 9's Adam rows, the paper's numbers) it uses these, so a key is written in its rule (optim)
# and here only (tests/test_cards.py). A new optimizer needs one only where an analysis names it.
GD, MOMENTUM, ADAM, SCALAR_ADAM, RMSPROP = "gd", "momentum", "adam", "scalar_adam", "rmsprop"
SIGNUM, LION, ADAFACTOR, MUON, SHAMPOO = "signum", "lion", "adafactor", "muon", "shampoo"
SGD, ADAM_P, SCALEDGD = "sgd", "adam_p", "scaledgd"

# In the schema's enum order: the sensing methods, then the twins' SGD, then the dial.
ALL: dict[str, Card] = {card.key: card for card in (
    Card(GD, EQ, "GD", colour="#000000", zoo=True),
    Card(MOMENTUM, EQ, "momentum"),
    Card(ADAM, CW, "Adam", colour="#D55E00", zoo=True, twin=1, table9=1),
    Card(SCALAR_ADAM, EQ, "scalar-Adam ($p{=}0$)", plain="scalar-Adam (p=0)", short="scalar-Adam",
         colour="#56B4E9", zoo=True, twin=3, table9=2),
    Card(RMSPROP, CW, "RMSProp", colour="#E69F00", zoo=True),
    Card(SIGNUM, CW, "signum", colour="#7A5C00", zoo=True),
    Card(LION, CW, "Lion", colour="#C7A100", zoo=True),
    Card(ADAFACTOR, CW, "Adafactor", colour="#CC79A7", zoo=True),
    Card(MUON, EQ, "Muon", colour="#0072B2", zoo=True, twin=4, table9=3, lr_aux=True),  # twins: the hybrid
    Card(SHAMPOO, EQ, "Shampoo", colour="#009E73", zoo=True),
    # The GPU ladder's control (sensing.md §3.6): gauge-equivariant under the orthogonal gauge.
    Card(SCALEDGD, EQ, "ScaledGD", control=True),
    # The attention twins' SGD is heavy-ball momentum (optim.momentum) under the paper's name.
    Card(SGD, EQ, "SGD", colour="#8C8C8C", sensing=False, twin=2, table9=4),
    # Adam-p's class at its default p = 1 (Adam); the dial sets p and convention per run.
    Card(ADAM_P, CW, "Adam-$p$", plain="Adam-p", sensing=False),
)}


def card(key: str) -> Card:
    """The card of ``key``; an unknown key fails, listing the known ones."""
    try:
        return ALL[key]
    except KeyError:
        raise KeyError(f"unknown optimizer {key!r}; known: {', '.join(ALL)}") from None


def label(key: str) -> str:
    return card(key).label


def plain(key: str) -> str:
    return card(key).plain


def short(key: str) -> str:
    return card(key).short


def colour(key: str) -> str:
    """The figure colour of ``key``; "" for a method without one or not known."""
    found = ALL.get(key)
    return found.colour if found else ""


def plain_word(word: str) -> str:
    """A sensing method's key in free text (a comparison row, a table cell) as its plain name;
    any other word unchanged."""
    found = ALL.get(word)
    return found.plain if found and found.sensing else word


def klass(key: str) -> str:
    """"eq" or "cw": the a-priori class; a key without a card counts as coordinate-wise; a control
    (ScaledGD) is "ctrl", on neither side of a split."""
    found = ALL.get(key)
    return "ctrl" if found and found.control else "eq" if found and found.equivariant else "cw"


def sensing() -> list[str]:
    """The sensing methods, in card order: the config schema's method enum."""
    return [k for k, c in ALL.items() if c.sensing]


def zoo() -> list[str]:
    """The paper's nine zoo methods (Table 2, Figure 1), in card order."""
    return [k for k, c in ALL.items() if c.zoo]


def twin_optimizers() -> tuple[str, ...]:
    """The attention twins' optimizers in the twin tables' order (adam, sgd, scalar_adam, muon)."""
    return tuple(sorted((k for k, c in ALL.items() if c.twin), key=lambda k: ALL[k].twin))


def table9_order() -> tuple[str, ...]:
    """Table 9's row order."""
    return tuple(sorted((k for k, c in ALL.items() if c.table9), key=lambda k: ALL[k].table9))
