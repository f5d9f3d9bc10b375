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


@pytest.mark.parametrize("bad, key", [
    ({"zoo": {"init": float("nan")}}, "zoo/init"),
    ({"zoo": {"grids": {"gd": [float("inf")]}}}, "zoo/grids/gd/0"),
    ({"zoo": {"tol": float("-inf")}}, "zoo/tol"),
    ({"zoo": {"budget": 2.5}}, "zoo/budget"),
    ({"seeds": ["forty-two"]}, "seeds/0"),
])
def test_non_finite_numbers_and_non_integer_counts_are_refused(bad, key):
    with pytest.raises(config.ConfigError, match=f"config key {key}:"):
        config.validate(bad)


def test_command_line_strings_and_integer_valued_floats_take_the_schemas_types():
    """`snakemake --config seeds='[42]'` hands over ['42']; `budget: 1.0e+4` is a count."""
    c = config.validate({"seeds": ["42"], "zoo": {"budget": "5000", "init": "3e-3", "grids": {"gd": ["0.01"]},
                                                  "early_stop": "false"}, "dial": {"budget": 1.0e4}})
    assert c["seeds"] == [42] and c["zoo"]["budget"] == 5000 and c["zoo"]["init"] == 3e-3
    assert c["zoo"]["grids"]["gd"] == [0.01] and c["zoo"]["early_stop"] is False
    assert c["dial"]["budget"] == 10000 and isinstance(c["dial"]["budget"], int)


@pytest.mark.parametrize("override", ["seeds=[42]", "zoo={budget: 5000}"])
def test_the_readmes_config_examples_work_as_written(override):
    """A dry run with the README's --config examples parses and plans the jobs."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-m", "snakemake", "-n", "--quiet", "rules", "--config", override],
                          cwd=root, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
