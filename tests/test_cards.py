"""The optimizer cards (gaugelab.optim.cards): each rule has one, the config schema's enums are the cards',
the outputs' names, colours and orders are the ones the paper's tables and figures print, and an
optimizer added as one rule and one card reaches Table 2, Figure 1 and the diagnostic."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
import yaml

from gaugelab import optim
from gaugelab.paper import figures, figures_twins, tables
from gaugelab.core import config, portable
from gaugelab.core.runtime import set_threads
from gaugelab.optim import cards
from gaugelab.sensing import runner, select
from gaugelab.tools import diagnose

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "src" / "gaugelab" / "data" / "config.schema.yaml"


def test_every_rule_has_a_card_of_its_class():
    assert set(optim.REGISTRY) <= set(cards.ALL)
    for name, factory in optim.REGISTRY.items():
        assert cards.card(name).equivariant == factory().equivariant, name
    assert all(key == card.key for key, card in cards.ALL.items())


def test_a_control_has_a_card_and_a_rule_outside_the_registry():
    """ScaledGD (the GPU ladder's control) updates U and V jointly: make() builds it, the registry
    (which the diagnostic and the twins run) leaves it out, and its class is "ctrl", in no split."""
    assert set(optim.CONTROLS) == {k for k, c in cards.ALL.items() if c.control} == {cards.SCALEDGD}
    assert not set(optim.CONTROLS) & set(optim.REGISTRY)
    assert optim.make(cards.SCALEDGD).equivariant == cards.card(cards.SCALEDGD).equivariant
    assert cards.klass(cards.SCALEDGD) == "ctrl" and cards.SCALEDGD in cards.sensing()
    pairs = [("gd", 0.1), ("adam", 0.5), (cards.SCALEDGD, 0.9)]  # ScaledGD's rec would make it an OVERLAP
    assert select.clean_split_from_values(pairs)["verdict"] == "CLEAN"


def test_every_twin_card_has_the_twins_form_of_its_rule():
    """optim.ATTENTION is the twins' one definition of their rules: one per twin card, of the card's
    class and named after the registry rule it runs (SGD is momentum, Muon the hybrid)."""
    assert tuple(optim.ATTENTION) == cards.twin_optimizers()
    runs = {name: optim.attention_rule(name, [True, False], 0.9, 1e-3) for name in optim.ATTENTION}
    assert {name: rule.name for name, rule in runs.items()} == {"adam": "adam", "sgd": "momentum",
                                                                 "scalar_adam": "scalar_adam", "muon": "muon_hybrid"}
    assert all(rule.equivariant == cards.card(name).equivariant for name, rule in runs.items())
    assert runs["sgd"].hparams["beta"] == 0.9 and runs["muon"].hparams["lr_aux"] == 1e-3
    # a card's lr_aux flag (the config asks for lr_aux) is the rule's being a hybrid that reads it
    assert {name: "lr_aux" in rule.hparams for name, rule in runs.items()} == {
        name: cards.card(name).lr_aux for name in runs}
    with pytest.raises(ValueError, match="unknown twin optimizer 'lion'"):
        optim.attention_rule("lion", [True], 0.9, 1e-3)


def test_the_schemas_enums_are_the_cards():
    """The schema file, read as YAML: adding a card means adding its key there too (the one line
    docs/adding-an-optimizer.md names), in card order."""
    schema = yaml.safe_load(SCHEMA.read_text())
    defs = schema["$defs"]
    assert defs["method"]["enum"] == cards.sensing(), "$defs/method/enum: the sensing cards, in card order"
    assert defs["method_grids"]["propertyNames"] == {"$ref": "#/$defs/method"}
    twin = defs["twin_pair"]["properties"]["optimizer"]["enum"]
    assert twin == list(cards.twin_optimizers()), "$defs/twin_pair/properties/optimizer/enum: the twin cards"
    zoo = defs["sensing_experiment"]["properties"]["grids"]["default"]
    assert list(zoo) == cards.zoo(), "the zoo's default grids: the paper's nine, in card order"
    props, twins = schema["properties"], list(cards.twin_optimizers())
    assert list(props["twins"]["properties"]["lr"]["properties"]) == twins, "twins/lr: one per twin card"
    table9 = props["table9"]["properties"]["lr"]["properties"]
    assert [list(table9[task]["properties"]) for task in ("mod", "text")] == [twins, twins], "table9/lr"


def test_an_optimizer_key_is_spelt_in_its_rule_and_its_card_only():
    """Every other engine module names an optimizer by its cards constant (cards.ADAM, ...), so a
    grep for a key finds its definition. "momentum" is also the twins' config key for beta."""
    src = ROOT / "src" / "gaugelab"
    for key in cards.ALL:
        spelt = re.compile(rf"""(["']){key}\1""")
        found = {p.relative_to(src).as_posix() for p in src.rglob("*.py") if spelt.search(p.read_text())}
        if key == cards.MOMENTUM:
            found -= {"attention/float64.py", "attention/twins.py"}  # settings["momentum"], the config key
        assert found == {"optim/rules.py", "optim/cards.py"}, (key, sorted(found))


def test_names_colours_and_orders_are_the_papers():
    """What the tables and figures printed before the cards, verbatim: outputs stay byte-identical."""
    latex = {"muon": "Muon", "gd": "GD", "scalar_adam": "scalar-Adam ($p{=}0$)", "shampoo": "Shampoo",
             "lion": "Lion", "signum": "signum", "rmsprop": "RMSProp", "adafactor": "Adafactor",
             "adam": "Adam", "momentum": "momentum", "scaledgd": "ScaledGD"}
    assert {k: cards.label(k) for k in cards.sensing()} == latex
    assert {k: cards.plain(k) for k in cards.sensing()} == {k: v.replace("$p{=}0$", "p=0") for k, v in latex.items()}
    assert {k: cards.short(k) for k in cards.twin_optimizers()} == {"adam": "Adam", "sgd": "SGD",
                                                                     "scalar_adam": "scalar-Adam", "muon": "Muon"}
    colours = {"gd": "#000000", "adam": "#D55E00", "muon": "#0072B2", "shampoo": "#009E73", "scalar_adam": "#56B4E9",
               "rmsprop": "#E69F00", "adafactor": "#CC79A7", "lion": "#C7A100", "signum": "#7A5C00"}
    assert {k: cards.colour(k) for k in cards.zoo()} == colours and cards.colour("momentum") == ""
    assert [s[2] for s in figures_twins.FIGURE2_SERIES] == ["#D55E00", "#D55E00", "#0072B2", "#0072B2", "#8C8C8C",
                                                            "#56B4E9"]
    assert [s[0] for s in figures_twins.FIGURE2_SERIES][-2:] == ["SGD, gauge twin", "scalar-Adam, gauge twin"]
    assert cards.zoo() == ["gd", "adam", "scalar_adam", "rmsprop", "signum", "lion", "adafactor", "muon", "shampoo"]
    assert cards.twin_optimizers() == ("adam", "sgd", "scalar_adam", "muon")
    assert cards.table9_order() == ("adam", "scalar_adam", "muon", "sgd")
    eq = {"gd", "momentum", "scalar_adam", "muon", "shampoo", "sgd"}
    assert {k for k in cards.ALL if select.klass(k) == "eq"} == eq
    assert cards.plain_word("sgd") == "sgd" and cards.plain_word("scalar_adam") == "scalar-Adam (p=0)"
    assert select.klass("not-a-method") == "cw"


# --- adding an optimizer: one rule, one card ------------------------------------------------------

KEY = "normalized_gd"


def normalized_gd() -> optim.Rule:
    """delta = -lr g / ||g|| with one norm per run over every entry of every parameter: the
    norm is gauge-invariant, so the rule is equivariant."""

    def update(grads, state, lr, t):
        norm = portable.sqrt(sum(optim.run_sum(g * g) for g in grads))  # (B,)
        return [-(optim.per_run(lr / (norm + optim.EPS), g) * g) for g in grads], state

    return optim.Rule(KEY, True, lambda params: {}, update)


@pytest.fixture
def added(monkeypatch):
    """The rule and its card registered as docs/adding-an-optimizer.md says, plus the schema's
    enum line (the schema is read once per process)."""
    monkeypatch.setitem(optim.REGISTRY, KEY, normalized_gd)
    monkeypatch.setitem(cards.ALL, KEY, cards.Card(KEY, True, "normalized GD", colour="#777777"))
    method = config.schema()["$defs"]["method"]
    monkeypatch.setitem(method, "enum", [*method["enum"], KEY])
    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    yield cards.ALL[KEY]
    set_threads(threads)
    torch.use_deterministic_algorithms(deterministic)


def test_an_added_optimizer_reaches_table2_figure1_and_the_diagnostic(added):
    cfg = yaml.safe_load((ROOT / "tests" / "config" / "smoke.yaml").read_text())
    grids = {"gd": [0.01, 0.03], "adam": [1.0e-3, 1.0e-2], KEY: [1.0e-3, 1.0e-2]}
    cfg["zoo"] |= {"grids": grids, "decayed": [KEY]}  # as config.yaml would list it
    cfg = config.validate(cfg)
    exp = cfg["zoo"]
    cells = [(m, seed, lr, 0.0) for m, grid in exp["grids"].items() for lr in grid for seed in cfg["seeds"]]
    runs = select.frame(runner.run_batch("zoo", exp, cells, threads=1))
    summary = select.select(select.aggregate(runs), exp["grids"], exp["selection"], exp["tol"])

    assert "normalized GD & eq & " in tables.table2_latex(summary, set())
    assert "<td>normalized GD</td><td>eq</td>" in tables.table2_html(summary, set())

    rows = figures.figure1_rows(runs, summary[summary["selected"]].set_index("method"))
    assert [r["method"] for r in rows] == [*grids] and len(rows[-1]["seeds_rec"]) == len(cfg["seeds"])
    fig = figures.figure1(rows, strict=False)
    fig.canvas.draw()
    ticks = {t.get_text(): t.get_color() for t in fig.axes[0].get_yticklabels()}
    assert ticks["normalized GD"] == figures.CLASS_COLOUR["eq"]
    with pytest.raises(AssertionError, match="missing scalar_adam, rmsprop"):  # strict: the paper's nine
        figures.figure1(rows, strict=True)

    plan = diagnose.plan(cfg["diagnose"])  # the workflow's diagnose target: the registry, then the config's
    assert plan[KEY]["source"] == KEY and plan[KEY]["testbeds"] == ["sensing"]
    report = diagnose.diagnose(KEY, steps=20, lr=plan[KEY]["lr"])
    assert report["a_priori_equivariant"] is True and report["verdict"] == "equivariant", report["summary"]
