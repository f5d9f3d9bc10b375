import pytest

from gaugelab import config


def test_defaults_are_the_papers_protocol():
    c = config.load()
    assert c["seeds"] == [42, 123, 456]
    zoo = c["zoo"]
    assert (zoo["n"], zoo["rank"], zoo["width"], zoo["budget"], zoo["init"]) == (40, 3, 40, 20000, 1e-3)
    assert sum(len(g) for g in zoo["grids"].values()) == 36
    assert set(zoo["decayed"]) == {"muon", "signum", "lion", "rmsprop"}


@pytest.mark.parametrize("bad, key", [
    ({"zoo": {"grids": {"adamw": [0.1]}}}, "zoo/grids"),
    ({"zoo": {"grids": {"gd": [-0.1]}}}, "zoo/grids/gd/0"),
    ({"zoo": {"budgte": 10}}, "zoo"),
    ({"sedds": [1]}, "(top level)"),
    ({"zoo": {"decayed": ["sgd"]}}, "zoo/decayed/0"),
])
def test_bad_input_names_the_key(bad, key):
    with pytest.raises(config.ConfigError) as err:
        config.validate(bad)
    assert f"config key {key}:" in str(err.value)
