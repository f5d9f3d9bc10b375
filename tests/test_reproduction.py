"""Exact reproduction of the stable Table 2 rows: the engine on the
paper's full grids and seeds, selection S1, held to the published values' tolerances."""

import pytest

from gaugelab.paper import published
from gaugelab.core import config
from gaugelab.sensing import runner, select

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("method", ["adam", "gd", "scalar_adam", "shampoo", "adafactor",
                                    pytest.param("lion", marks=pytest.mark.full),
                                    pytest.param("muon", marks=pytest.mark.full)])
def test_table2_row_reproduces(method):
    cfg = config.load()
    zoo, grid = cfg["zoo"], cfg["zoo"]["grids"][method]
    recs = [r for seed in cfg["seeds"] for r in runner.run_cells("zoo", zoo, method, seed, grid, threads=1)]
    scored = select.select(select.aggregate(select.frame(recs)), {method: grid}, "S1", zoo["tol"])
    row = scored[scored["selected"]].iloc[0]
    assert row["lr"] == published.lookup("Table 2", method, "lr").value
    for quantity in ("rec", "erank"):
        value = published.lookup("Table 2", method, quantity)
        assert abs(row[quantity] - value.value) <= value.tolerance, (quantity, row[quantity], value.value)
    assert row["worst_train"] < zoo["tol"]


def test_dial_endpoints_reproduce():
    """Section 7, arm A: p = 1 and both p = 0 scalars, tuned by S4 over the dial's grid."""
    from gaugelab.sensing import dial

    cfg = config.load()
    settings = cfg["dial"]
    rules = dial.variants([1, 0], ["rms", "geo"])
    cells = [(name, seed, lr, 0.0) for name in rules for seed in cfg["seeds"] for lr in settings["lrs"]]
    recs = runner.run_batch("dial", settings, cells, rules=rules, threads=1)
    scored = select.select(select.aggregate(select.frame(recs)), {n: settings["lrs"] for n in rules}, "S4",
                           settings["tol"])
    chosen = scored[scored["selected"]].set_index("method")
    for value in published.DIAL:
        if value.quantity in ("rec", "erank") and value.row in chosen.index:
            got = chosen.loc[value.row, value.quantity]
            assert abs(got - value.value) <= value.tolerance, (value.key, got)
