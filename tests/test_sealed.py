"""Sealed files (gaugelab.core.sealed): the seal beside every table and product says which bytes were
written for which path; what is cut short, emptied, edited, copied from elsewhere or unsealed is
named, and sha256sum reads the seal as its own format."""

import shutil
import subprocess

import pytest

from gaugelab.core import records, sealed


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """A working folder like the workflow's, with one experiment's summary sealed in it."""
    monkeypatch.chdir(tmp_path)
    sealed.write("results/zoo/summary.csv", "method,rec\nadam,0.5\n")
    return tmp_path


def test_a_sealed_file_is_usable_and_names_its_own_path(workdir):
    assert sealed.problem("results/zoo/summary.csv") is None
    assert sealed.problem(workdir / "results/zoo/summary.csv") is None  # however it is named
    assert (workdir / "results/zoo/summary.csv.sha256").read_text().endswith("  results/zoo/summary.csv\n")


def test_sha256sum_checks_the_seal_from_the_working_folder(workdir):
    if shutil.which("sha256sum") is None:
        pytest.skip("no sha256sum")
    proc = subprocess.run(["sha256sum", "-c", "results/zoo/summary.csv.sha256"], capture_output=True, text=True)
    assert proc.returncode == 0 and "results/zoo/summary.csv: OK" in proc.stdout


@pytest.mark.parametrize("damage, words", [
    (lambda p: p.write_text(""), "does not match summary.csv.sha256"),
    (lambda p: p.write_text(p.read_text()[:10]), "does not match summary.csv.sha256"),
    (lambda p: p.write_text(p.read_text().replace("0.5", "0.4")), "does not match summary.csv.sha256"),
    (lambda p: (p.parent / "summary.csv.sha256").unlink(), "no summary.csv.sha256 beside it"),
], ids=["emptied", "cut-short", "edited", "unsealed"])
def test_a_damaged_file_is_named_with_what_is_wrong(workdir, damage, words):
    path = workdir / "results/zoo/summary.csv"
    damage(path)
    assert words in sealed.problem("results/zoo/summary.csv")
    with pytest.raises(records.RecordError, match=words):
        records.read_table("results/zoo/summary.csv")


def test_a_copy_from_another_experiment_with_its_seal_is_found(workdir):
    (workdir / "results/init_scale").mkdir()
    for name in ("summary.csv", "summary.csv.sha256"):
        shutil.copyfile(workdir / "results/zoo" / name, workdir / "results/init_scale" / name)
    reason = sealed.problem("results/init_scale/summary.csv")
    assert reason == ("results/init_scale/summary.csv: a copy of results/zoo/summary.csv "
                      "(its summary.csv.sha256 names that file, not this one)")
    assert records.problem("results/init_scale/summary.csv", records.SEALED) == reason


def test_binary_products_are_sealed_and_written_whole(workdir):
    sealed.write("results/figures/f.png", b"\x89PNG\r\n")
    assert sealed.problem("results/figures/f.png") is None
    assert sorted(p.name for p in (workdir / "results/figures").iterdir()) == ["f.png", "f.png.sha256"]


def test_a_file_outside_the_working_folder_is_sealed_by_its_absolute_path(workdir, tmp_path_factory):
    outside = tmp_path_factory.mktemp("elsewhere") / "table.tex"
    sealed.write(outside, "x\n")
    assert sealed.seal_of(outside).read_text().endswith(f"  {outside.resolve()}\n")
    assert sealed.problem(outside) is None
