"""Sealed files (gaugelab.core.sealed): the seal beside every table and product says which bytes were
written for which path; what is cut short, emptied, edited, copied from elsewhere or unsealed is
named, and sha256sum reads the seal as its own format."""

import shutil
import subprocess
import sys
from pathlib import Path

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


@pytest.fixture
def made(workdir):
    """A table made from a run record and a CSV (both inputs named in its seal), with settings."""
    record = workdir / "results/runs/zoo/adam/seed42.json"
    record.parent.mkdir(parents=True)
    record.write_text('{"final": {"rec": 0.5}, "wall_s": 1.5, "digest": "sha256:aa"}\n')
    sealed.made_from(["results/runs/zoo/adam/seed42.json", "results/zoo/summary.csv"], {"tol": 0.05})
    sealed.write("results/tables/t.tex", "rec 0.5\n")
    return workdir


def test_the_seal_names_each_input_and_the_settings_and_sha256sum_still_reads_it(made):
    lines = (made / "results/tables/t.tex.sha256").read_text().splitlines()
    assert lines[0].endswith("  results/tables/t.tex")
    assert [line.split("  ")[-1] for line in lines[1:3]] == ["results/runs/zoo/adam/seed42.json",
                                                            "results/zoo/summary.csv"]
    assert lines[1].startswith("# from ") and lines[3].startswith("# settings ") and len(lines) == 4
    assert sealed.problem("results/tables/t.tex") is None
    if shutil.which("sha256sum"):
        proc = subprocess.run(["sha256sum", "-c", "--strict", "results/tables/t.tex.sha256"],
                              capture_output=True, text=True)
        assert proc.returncode == 0 and proc.stdout == "results/tables/t.tex: OK\n", proc.stdout + proc.stderr


@pytest.mark.parametrize("damage, words", [
    (lambda w: (w / "results/zoo/summary.csv").write_text("method,rec\nadam,0.4\n"),
     "made from results/zoo/summary.csv, which has changed since (remade or edited)"),
    (lambda w: (w / "results/runs/zoo/adam/seed42.json").write_text('{"final": {"rec": 0.4}, "wall_s": 1.5}\n'),
     "made from results/runs/zoo/adam/seed42.json, which has changed since (remade or edited)"),
    (lambda w: (w / "results/zoo/summary.csv").unlink(), "made from results/zoo/summary.csv, which is no longer there"),
], ids=["table-remade", "record-remade", "input-gone"])
def test_a_product_whose_inputs_changed_or_went_is_named(made, damage, words):
    damage(made)
    assert sealed.problem("results/tables/t.tex") == f"results/tables/t.tex: {words}"


def test_a_rerun_record_differing_in_when_and_where_it_was_made_only_is_the_same_input(made):
    seal = (made / "results/tables/t.tex.sha256").read_text()
    rerun = ('{"digest": "sha256:bb", "final": {"rec": 0.5}, "wall_s": 9, '  # another time and place, the same numbers
             '"environment": {"cpu": "elsewhere", "slurm_job_id": "17"}}')
    (made / "results/runs/zoo/adam/seed42.json").write_text(rerun)
    assert sealed.problem("results/tables/t.tex") is None
    sealed.made_from(["results/runs/zoo/adam/seed42.json", "results/zoo/summary.csv"], {"tol": 0.05})
    sealed.write("results/tables/t.tex", "rec 0.5\n")
    assert (made / "results/tables/t.tex.sha256").read_text() == seal  # remade byte for byte, seal and all


def test_other_settings_give_another_seal(made):
    seal = (made / "results/tables/t.tex.sha256").read_text()
    sealed.made_from(["results/runs/zoo/adam/seed42.json", "results/zoo/summary.csv"], {"tol": 0.1})
    sealed.write("results/tables/t.tex", "rec 0.5\n")
    assert (made / "results/tables/t.tex.sha256").read_text() != seal


def test_a_moved_working_folder_finds_the_inputs_in_its_own_place(made, tmp_path_factory, monkeypatch):
    moved = tmp_path_factory.mktemp("moved") / "work"
    shutil.copytree(made, moved)
    monkeypatch.chdir(tmp_path_factory.getbasetemp())
    assert sealed.problem(moved / "results/tables/t.tex") is None
    (moved / "results/zoo/summary.csv").write_text("other\n")
    assert "which has changed since" in sealed.problem(moved / "results/tables/t.tex")


def test_a_snakemake_jobs_seal_names_its_inputs_and_params_but_not_its_set_aside_files(tmp_path):
    """A real Snakemake job (named and listed inputs are flattened by Snakemake, as in the workflow)."""
    src = Path(sealed.__file__).parents[2]
    (tmp_path / "script.py").write_text(
        f"import sys\nsys.path.insert(0, {str(src)!r})\nfrom gaugelab.core import sealed\n"
        "sealed.made_from_job(snakemake)\nsealed.write(snakemake.output[0], 'x\\n')\n")
    (tmp_path / "Snakefile").write_text(
        "rule t:\n    input: runs=['a.json', 'b.csv'], set_aside=['aside/t.tex.0123456789ab']\n"
        "    output: 't.tex'\n    params: tol=0.05\n    script: 'script.py'\n")
    for name, text in (("a.json", '{"rec": 1, "wall_s": 2}'), ("b.csv", "rec\n1\n"), ("aside/t.tex.0123456789ab", "")):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    proc = subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", "-d", str(tmp_path),
                           "-s", str(tmp_path / "Snakefile")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    names = [line.split("  ")[-1] for line in (tmp_path / "t.tex.sha256").read_text().splitlines()]
    assert names[:3] == ["t.tex", "a.json", "b.csv"] and names[3].startswith("# settings ") and len(names) == 4
