import json
import math

import pytest

from gaugelab.core import records, sealed


def record(**extra):
    base = {"schema": records.SCHEMA, "experiment": "zoo", "method": "gd", "lr": 0.01, "seed": 42,
            "perturbation": 0.0, "status": "diverged", "steps": 7, "train": math.nan,
            "rec": math.nan, "erank": math.nan, "nuc": math.nan, "bal": math.nan,
            "curve": {"step": [1], "loss": [1.0]}, "config": {}, "environment": {},
            "provenance": records.provenance({"experiment": "zoo", "method": "gd", "lr": 0.01, "seed": 42,
                                              "perturbation": 0.0}, {})}
    return base | extra


def test_roundtrip_stores_nan_as_null(tmp_path):
    path = tmp_path / "r.json"
    records.write_json(path, record())
    assert json.loads(path.read_text())["rec"] is None
    back = records.read(path)
    assert math.isnan(back["rec"]) and back["steps"] == 7
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind
    assert path.stat().st_mode & 0o777 == 0o666 & ~sealed.UMASK  # as any other output, not mkstemp's 0600


def test_a_file_cut_short_is_an_error_naming_it(tmp_path):
    path = tmp_path / "r.json"
    records.write_json(path, record())
    path.write_text(path.read_text()[:40])
    with pytest.raises(records.RecordError, match=r"r\.json: not valid JSON"):
        records.read(path)
    assert not records.is_valid(path)


def test_missing_field_and_bad_status(tmp_path):
    stored = records._stamped(record())
    with pytest.raises(records.RecordError, match="'seed' is a required property"):
        records.validate({k: v for k, v in stored.items() if k != "seed"})
    with pytest.raises(records.RecordError, match="field status: 'exploded' is not one of"):
        records.validate({**stored, "status": "exploded"})


def test_an_edited_record_fails_its_digest(tmp_path):
    path = tmp_path / "r.json"
    records.write_json(path, record(rec=0.5))
    path.write_text(path.read_text().replace('"rec": 0.5', '"rec": 0.25'))
    with pytest.raises(records.RecordError, match="field digest: does not match the payload"):
        records.read(path)


def test_a_record_at_another_runs_path_is_named_as_such(tmp_path):
    path = tmp_path / "r.json"
    records.write_json(path, record())
    other = records.provenance({"experiment": "zoo", "method": "gd", "lr": 0.03, "seed": 42, "perturbation": 0.0}, {})
    assert "provenance.what.lr is 0.01, expected 0.03" in records.problem(path, records.SCHEMA, other)
    assert "other settings" in records.problem(path, records.SCHEMA, records.provenance(
        record()["provenance"]["what"], {"budget": 5}))
    assert records.problem(path, records.SCHEMA, record()["provenance"]) is None


def test_bundle_roundtrip(tmp_path):
    path = tmp_path / "b.json"
    records.write_bundle(path, [record(), record(seed=123)], {"experiment": "zoo", "shard": 0, "shards": 1}, {})
    assert [r["seed"] for r in records.read_bundle(path)] == [42, 123]
    assert records.is_valid(path, records.BUNDLE_SCHEMA) and not records.is_valid(path)


def test_a_bundle_made_under_another_rerun_rule_is_set_aside(tmp_path, monkeypatch):
    """Which cells a sensitivity bundle reruns is part of its identity: after a change of the rule
    (here: Table 6's const arm rerunning RMSProp's spd-sel cell only, as it once did), the old
    bundle no longer passes for the new one."""
    from gaugelab.paper import sensing_quantities as sq

    def identity():
        return sq.bundle_identity("schedule_const", {"budget": 5}, 0, 3, [42], [1e-7], "float32")

    monkeypatch.setitem(sq.RERUN, "schedule_const", [("S3b", ["rmsprop"])])
    path = tmp_path / "sensitivity_shard0.json"
    records.write_bundle(path, [record()], *identity())
    assert records.problem(path, records.BUNDLE_SCHEMA, records.provenance(*identity())) is None
    monkeypatch.setitem(sq.RERUN, "schedule_const", [("S3a", None), ("S3b", ["rmsprop"])])
    assert "other settings" in records.problem(path, records.BUNDLE_SCHEMA, records.provenance(*identity()))


PORTABLE = {"numerics": "x86-portable", "isa": "AVX2", "blas": "MKL 2024.2", "blas_mode": "COMPATIBLE,STRICT",
            "cpu": {"vendor": "AuthenticAMD", "model": "AMD EPYC"}}
NATIVE = {**PORTABLE, "numerics": "native", "isa": "AVX512", "blas_mode": "OFF"}


def test_a_summary_refuses_records_of_two_numerics_modes():
    from gaugelab.sensing import select

    same = [record(seed=s, environment=PORTABLE) for s in (42, 123)]
    assert len(select.frame(same)) == 2
    with pytest.raises(records.RecordError, match=r"native \(ATen AVX512, MKL 2024.2 OFF\): 1 .*seed=123"):
        select.frame([same[0], record(seed=123, environment=NATIVE)])
    with pytest.raises(records.RecordError, match="unstated"):  # a record made before the contract
        select.frame([same[0], record(seed=123)])


def test_the_numerics_table_names_the_mode_and_cpus_and_refuses_a_mix(tmp_path):
    paths = []
    for i, (family, env) in enumerate([("zoo", PORTABLE), ("dial", PORTABLE | {"cpu": {"model": "Xeon"}})]):
        paths.append(tmp_path / "results" / "runs" / family / f"seed{i}.json")
        records.write_json(paths[-1], record(seed=i, environment=env))
    table = records.numerics_table(paths)
    assert table.to_dict("records") == [
        {"family": "zoo", "records": 1, "numerics": "x86-portable", "isa": "AVX2", "blas": "MKL 2024.2",
         "blas_mode": "COMPATIBLE,STRICT", "cpu": "AMD EPYC"},
        {"family": "dial", "records": 1, "numerics": "x86-portable", "isa": "AVX2", "blas": "MKL 2024.2",
         "blas_mode": "COMPATIBLE,STRICT", "cpu": "Xeon"}]
    records.write_json(paths[1], record(seed=1, environment=NATIVE))
    with pytest.raises(records.RecordError, match="different numerics modes"):
        records.numerics_table(paths)
