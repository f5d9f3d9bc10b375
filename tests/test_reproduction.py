"""Exact reproduction of the stable Table 2 rows: the engine on the
paper's full grids and seeds, selection S1, held to the published values' tolerances."""

import pytest

from gaugelab import config, published, runner, select

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("method", ["adam", "gd", "scalar_adam", "shampoo", "adafactor", "lion", "muon"])
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
