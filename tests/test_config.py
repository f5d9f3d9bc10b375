import copy

import pytest

from gaugelab import configuration
from gaugelab.core import config


def test_defaults_are_the_papers_protocol():
    c = configuration.load()
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
        configuration.validate(bad)
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
        configuration.validate(bad)


def test_command_line_strings_and_integer_valued_floats_take_the_schemas_types():
    """`snakemake --config seeds='[42]'` hands over ['42']; `budget: 1.0e+4` is a count."""
    c = configuration.validate({"seeds": ["42"], "zoo": {"budget": "5000", "init": "3e-3", "grids": {"gd": ["0.01"]},
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
                          check=False, cwd=root, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]


@pytest.mark.parametrize("bad, key, message", [
    ({"zoo": {"n": 4, "rank": 9}}, "zoo/rank", "planted rank 9 exceeds n = 4"),
    ({"zoo": {"width": 2}}, "zoo/width", "factor width 2 is below the planted rank 3"),
    ({"second_size": {"n": 3}}, "second_size/rank", "planted rank 5 exceeds n = 3"),
    ({"dial": {"width": 1}}, "dial/width", "factor width 1 is below the planted rank 3"),
    ({"diagnose": {"sensing": {"rank": 13}}}, "diagnose/sensing/rank", "planted rank 13 exceeds n = 12"),
    ({"zoo": {"n": 2, "rank": 1, "width": 2, "measurements_per_dof": 0.1}}, "zoo/measurements_per_dof",
     "is 0 measurements at zoo's n = 2"),
    ({"zoo": {"tol": 0}}, "zoo/tol", "less than or equal to the minimum of 0"),
    ({"dial": {"tol": -1e-7}}, "dial/tol", "less than or equal to the minimum of 0"),
    ({"zoo": {"init": 0}}, "zoo/init", "less than or equal to the minimum of 0"),
    ({"zoo": {"init": float("inf")}}, "zoo/init", "not a finite number"),
    ({"zoo": {"grids": {"adam": [1e-3, 0]}}}, "zoo/grids/adam/1", "less than or equal to the minimum of 0"),
    ({"dial": {"lrs": [float("nan")]}}, "dial/lrs/0", "not a finite number"),
    ({"twins": {"lr": {"adam": -1e-3}}}, "twins/lr/adam", "less than or equal to the minimum of 0"),
    ({"twins": {"d": 30}}, "twins/d", "d = 30 is not a multiple of H = 4"),
    ({"diagnose": {"attention": {"d": 33}}}, "diagnose/attention/d", "d = 33 is not a multiple of n_head = 4"),
    ({"twins": {"steps": 6}}, "twins/checkpoints", "[10, 50, 100, 300, 600, 1000, 1500] lie beyond steps = 6"),
    ({"zoo": {"budget": 1000000000000}}, "zoo/budget", "greater than the maximum of 10000000"),
    ({"dial": {"budget": 10**8}}, "dial/budget", "greater than the maximum of 10000000"),
    ({"schedule_control": {"rmsprop_budget": 10**8}}, "schedule_control/rmsprop_budget", "maximum of 10000000"),
    ({"nuclear_reference": {"max_iter": 10**8}}, "nuclear_reference/max_iter", "maximum of 10000000"),
    ({"twins": {"steps": 10**8}}, "twins/steps", "maximum of 10000000"),
    ({"diagnose": {"steps": 10**8}}, "diagnose/steps", "maximum of 10000000"),
    ({"table9": {"steps": {"f64-mod47-L2d64h4": 10**8}}}, "table9/steps/f64-mod47-L2d64h4", "maximum of 10000000"),
    ({"table9": {"merge": {"steps": 10**8}}}, "table9/merge/steps", "maximum of 10000000"),
])
def test_rules_across_keys_and_ceilings_name_the_key(bad, key, message):
    with pytest.raises(config.ConfigError) as err:
        configuration.validate(bad)
    assert f"config key {key}: " in str(err.value) and message in str(err.value)


@pytest.mark.parametrize("optimizers, settings, key, message", [
    (["torch.optim:Nope"], {}, "diagnose/optimizers/0", "module 'torch.optim' has no attribute 'Nope'"),
    (["torch.optim:SGD", "no_such_module:Opt"], {}, "diagnose/optimizers/1", "cannot import module 'no_such_module'"),
    (["adamw"], {}, "diagnose/optimizers/0", "unknown optimizer 'adamw'"),
    (["collections:OrderedDict"], {}, "diagnose/optimizers/0", "not a torch.optim.Optimizer subclass"),
    (["torch.optim:Adam"], {"torch.optim:Adam": {"options": {"betas": "oops"}}},
     "diagnose/settings/torch.optim:Adam/options", "could not be built"),
    ([], {"adam": {"options": {"beta9": 0.9}}},
     "diagnose/settings/adam/options", "unexpected keyword argument 'beta9'"),
])
def test_diagnose_optimizers_resolve_at_validation(optimizers, settings, key, message):
    """An optimizer the diagnostic cannot build fails when the config is read, not in its job."""
    with pytest.raises(config.ConfigError) as err:
        configuration.validate({"diagnose": {"optimizers": optimizers, "settings": settings}})
    assert f"config key {key}: " in str(err.value) and message in str(err.value)


def test_a_jobs_own_process_leaves_the_optimizer_build_to_the_main_process():
    """A cluster job's process reads the Snakefile again: it resolves nothing new (the main
    process built every optimizer), so an option only a build would reject passes there."""
    unbuildable = {"diagnose": {"optimizers": ["torch.optim:Adam"],
                                "settings": {"torch.optim:Adam": {"options": {"betas": "oops"}}}}}
    configuration.validate(copy.deepcopy(unbuildable), build_optimizers=False)
    with pytest.raises(config.ConfigError, match="could not be built"):
        configuration.validate(copy.deepcopy(unbuildable))


def test_every_error_is_one_line_of_one_message():
    with pytest.raises(config.ConfigError) as err:
        configuration.validate({"zoo": {"n": 4, "rank": 9, "budget": 10**12}, "twins": {"d": 30}, "sedds": [1]})
    assert err.value.errors == [
        "config key (top level): Additional properties are not allowed ('sedds' was unexpected)",
        "config key zoo/budget: 1000000000000 is greater than the maximum of 10000000",
        "config key zoo/rank: planted rank 9 exceeds n = 4 (X* is n x n)",
        "config key twins/d: d = 30 is not a multiple of H = 4 (each head is d/H wide)",
    ]
    assert str(err.value) == "invalid configuration:\n  " + "\n  ".join(err.value.errors)


def test_rules_across_keys_skip_a_block_of_the_wrong_types():
    """A block the schema refused is not read again (its values may be of any type)."""
    with pytest.raises(config.ConfigError) as err:
        configuration.validate({"zoo": {"n": "forty", "rank": [3]}, "twins": "big", "diagnose": {"optimizers": 5}})
    assert all(":" in line and "Traceback" not in line for line in err.value.errors)
    assert {line.split(":")[0] for line in err.value.errors} == {
        "config key zoo/n", "config key zoo/rank", "config key twins", "config key diagnose/optimizers"}


@pytest.mark.parametrize("path", [None, "config.yaml", "tests/config/smoke.yaml"])
def test_the_shipped_configurations_are_valid(path):
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    configuration.load(None if path is None else root / path)


def test_a_config_file_that_cannot_be_read_or_parsed_names_the_file(tmp_path):
    with pytest.raises(config.ConfigError, match="cannot read the configuration") as err:
        configuration.load(tmp_path / "missing.yaml")
    assert err.value.errors == [f"{tmp_path / 'missing.yaml'}: No such file or directory"]
    (tmp_path / "bad.yaml").write_text("zoo:\n  n: [4\n")
    with pytest.raises(config.ConfigError, match="not valid YAML") as err:
        configuration.load(tmp_path / "bad.yaml")
    assert str(tmp_path / "bad.yaml") in err.value.errors[0] and "line 3" in err.value.errors[0]


def test_importing_config_does_not_import_torch():
    """The workflow validates at parse time; only the optimizer check, when it runs, needs torch."""
    import subprocess
    import sys

    code = "import sys, gaugelab.core.config; sys.exit('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


@pytest.mark.parametrize("bad, key, message", [
    ({"seeds": ["42", "042"]}, "seeds", "42 is listed twice (items 0 and 1)"),  # --config seeds='[42, 042]'
    ({"zoo": {"grids": {"gd": [0.01, 1.0e-2]}}}, "zoo/grids/gd", "0.01 is listed twice (items 0 and 1)"),
    ({"dial": {"lrs": [1e-3, 1e-2, 0.001]}}, "dial/lrs", "0.001 is listed twice (items 0 and 2)"),
    ({"dial": {"ps": [1, 0.5, 1.0]}}, "dial/ps", "1.0 is listed twice"),
    ({"dial": {"ps": [1, 0.5, 0.500000001]}}, "dial/ps/2", "both name the outputs 'rms_p0.5'"),
    ({"init_scale": {"inits": [1e-3, 1.0000001e-3]}}, "init_scale/inits/1", "both name the outputs 'init_scale_0p001'"),
    ({"sensitivity": {"perturbations": [1e-7, 1e-7]}}, "sensitivity/perturbations", "listed twice"),
    ({"twins": {"sets": {"d5": [{"optimizer": "adam", "twin": "identity", "init": 42}] * 2}}}, "twins/sets/d5",
     "listed twice (items 0 and 1)"),
    ({"zoo": {"decayed": ["muon", "muon"]}}, "zoo/decayed", "'muon' is listed twice"),
])
def test_a_list_that_keys_outputs_refuses_duplicates_naming_the_key(bad, key, message):
    """Duplicates ended in Snakemake's 'Duplicate output file pattern' (or one output made twice)."""
    with pytest.raises(config.ConfigError) as err:
        configuration.validate(bad)
    assert f"config key {key}: " in str(err.value) and message in str(err.value)


@pytest.mark.parametrize("bad, key", [
    ({"seeds": [2**64]}, "seeds/0"),  # torch.Generator.manual_seed: Overflow when unpacking long long
    ({"seeds": [2**63 - 7]}, "seeds/0"),  # seed + 7 draws the initial factors: past int64
    ({"seeds": [-1]}, "seeds/0"),
    ({"twins": {"data_seed": 2**64}}, "twins/data_seed"),
    ({"twins": {"sets": {"d5": [{"optimizer": "adam", "twin": "gauge", "init": 42, "seed": 2**64}]}}},
     "twins/sets/d5/0/seed"),
    ({"diagnose": {"sensing": {"seed": 2**64}}}, "diagnose/sensing/seed"),
    ({"diagnose": {"attention": {"init_seed": 2**70}}}, "diagnose/attention/init_seed"),
])
def test_a_seed_the_generators_cannot_take_is_refused(bad, key):
    with pytest.raises(config.ConfigError, match=f"config key {key}: "):
        configuration.validate(bad)


def test_the_largest_seed_fits_every_generator_it_seeds():
    import torch

    top = config.schema()["$defs"]["seed"]["maximum"]
    configuration.validate({"seeds": [0, top]})
    torch.Generator().manual_seed(top + 7)  # the initial factors' generator (testbed.init_factors)
    assert top + 7 == 2**63 - 1


@pytest.mark.parametrize("bad, key, message", [
    ({"zoo": {"n": 100000}}, "zoo/n", "100000 is greater than the maximum of 4096"),
    ({"zoo": {"n": 400}}, "zoo/n", "the measurement operator A would be m x n^2 = 4782 x 160000"),
    ({"zoo": {"n": 200, "width": 10**6}}, "zoo/width", "greater than the maximum of 4096"),
    ({"second_size": {"n": 300}}, "second_size/n", "above the ceiling of 2^28"),
    ({"twins": {"P": 100000}}, "twins/P", "greater than the maximum of 1000"),
    ({"twins": {"d": 4096}}, "twins/d", "greater than the maximum of 1024"),
    ({"twins": {"L": 1000}}, "twins/L", "greater than the maximum of 64"),
    ({"diagnose": {"attention": {"P": 5000}}}, "diagnose/attention/P", "greater than the maximum of 1000"),
])
def test_sizes_beyond_memory_are_refused(bad, key, message):
    with pytest.raises(config.ConfigError) as err:
        configuration.validate(bad)
    assert f"config key {key}: " in str(err.value) and message in str(err.value)


def test_the_default_sizes_are_well_within_the_ceilings():
    c = configuration.load()
    per_dof = c["zoo"]["measurements_per_dof"]  # second_size takes the zoo's
    for exp in (c["zoo"], c["second_size"]):
        m = int(per_dof * exp["rank"] * (2 * exp["n"] - exp["rank"]))
        assert m * exp["n"] ** 2 < config.MAX_OPERATOR / 50


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="refusing cuda needs a machine without CUDA")
@pytest.mark.parametrize("key", ["device", "table9/device", "table9/step1_device"])
def test_cuda_on_a_machine_without_it_is_refused_and_auto_is_fine(key):
    def at(path, value):
        head, _, rest = path.partition("/")
        return {head: at(rest, value) if rest else value}

    with pytest.raises(config.ConfigError, match=f"config key {key}: cuda, but torch finds no CUDA device"):
        configuration.validate(at(key, "cuda"))
    configuration.validate(at(key, "auto"))


@pytest.mark.parametrize("content, heading, line", [
    (b"seeds: [42]\nseeds: [1]\n", "the configuration gives a key twice", "key seeds is given twice (lines 1 and 2)"),
    (b"twins:\n  sets:\n    d5: []\n    d5: []\n", "gives a key twice",
     "key twins/sets/d5 is given twice (lines 3 and 4)"),
    (b'{"zoo": {"n": 8, "n": 9}}', "gives a key twice", "key 'n' is given twice"),
    (b"seeds: [42] # \xff\n", "cannot read the configuration", "not UTF-8 (byte 0xff at offset 14)"),
    (b"0\n", "the configuration is not a mapping", "holds 0"),
    (b"[]\n", "the configuration is not a mapping", "holds []"),
])
def test_a_file_is_read_strictly(tmp_path, content, heading, line):
    path = tmp_path / "cfg.yaml"
    path.write_bytes(content)
    with pytest.raises(config.ConfigError, match=heading) as err:
        configuration.load(path)
    assert err.value.errors[0].startswith(f"{path}: ") and line in err.value.errors[0]


def test_an_empty_file_and_yaml_merge_keys_are_fine(tmp_path):
    (tmp_path / "empty.yaml").write_text("")
    assert configuration.load(tmp_path / "empty.yaml")["seeds"] == [42, 123, 456]
    (tmp_path / "merge.yaml").write_text("base: &b {n: 8, rank: 2, width: 8}\n")
    assert config.read(tmp_path / "merge.yaml") == {"base": {"n": 8, "rank": 2, "width": 8}}
    (tmp_path / "anchors.yaml").write_text("zoo: &z {n: 8, rank: 2, width: 8}\ndial:\n  <<: *z\n  n: 9\n")
    assert config.read(tmp_path / "anchors.yaml")["dial"] == {"n": 9, "rank": 2, "width": 8}


def test_table9s_configurations_are_one_table_held_equal_to_the_schema():
    """attention.configs is the one table of Table 9's configurations; the schema lists the same
    names (choices and default) and step budgets, and the command offers the same choices."""
    from gaugelab import cli
    from gaugelab.attention import configs

    t9 = config.schema()["properties"]["table9"]["properties"]
    names = list(configs.CONFIGS)
    assert t9["configs"]["items"]["enum"] == t9["configs"]["default"] == names == cli.TABLE9_CONFIGS
    assert {k: v["default"] for k, v in t9["steps"]["properties"].items()} == configs.STEPS
    assert list(configs.LABELS) == list(configs.SHORT) == list(configs.STEPS) == names
