import json
import math

import pytest

from gaugelab import records


def record(**extra):
    base = {"schema": records.SCHEMA, "experiment": "zoo", "method": "gd", "lr": 0.01, "seed": 42,
            "perturbation": 0.0, "status": "diverged", "steps": 7, "train": math.nan,
            "rec": math.nan, "erank": math.nan, "nuc": math.nan, "bal": math.nan,
            "curve": {"step": [1], "loss": [1.0]}, "config": {}, "environment": {}}
    return base | extra


def test_roundtrip_stores_nan_as_null(tmp_path):
    path = tmp_path / "r.json"
    records.write_json(path, record())
    assert json.loads(path.read_text())["rec"] is None
    back = records.read(path)
    assert math.isnan(back["rec"]) and back["steps"] == 7
    assert list(tmp_path.iterdir()) == [path]  # no temporary file left behind


def test_a_file_cut_short_is_an_error_naming_it(tmp_path):
    path = tmp_path / "r.json"
    records.write_json(path, record())
    path.write_text(path.read_text()[:40])
    with pytest.raises(records.RecordError, match=r"r\.json: not valid JSON"):
        records.read(path)
    assert not records.is_valid(path)


def test_missing_field_and_bad_status(tmp_path):
    with pytest.raises(records.RecordError, match="missing field 'seed'"):
        records.validate({k: v for k, v in record().items() if k != "seed"})
    with pytest.raises(records.RecordError, match="unknown status"):
        records.validate(record(status="exploded"))


def test_bundle_roundtrip(tmp_path):
    path = tmp_path / "b.json"
    records.write_bundle(path, [record(), record(seed=123)])
    assert [r["seed"] for r in records.read_bundle(path)] == [42, 123]
    assert records.is_valid(path, bundle=True) and not records.is_valid(path)
