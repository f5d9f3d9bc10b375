"""Corrupted, edited and misplaced records, intermediates and final products (tables, figures,
macros, pages), as a reliability tester would plant them in a finished run of the smoke
configuration (real Snakemake runs).

Every corruption is planted at once in one copy of the smoke run. Then: reading the workflow
(a dry run, lint, the summary, unlock, the report) changes no file and starts no job; the run
names every bad file and what is wrong with it, sets it aside, reruns what made it, and ends with
every product byte-identical to the undisturbed run.
"""

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gaugelab.core import records, runtime, sealed

pytestmark = pytest.mark.workflow

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / "tests" / "config" / "smoke.yaml"
ZOO = "results/runs/zoo"
TWINS = "results/runs/twins/cpu-mod11-L2d16h2"


def _json(path):
    return json.loads(path.read_text())


def truncate(path):
    path.write_bytes(path.read_bytes()[:120])


def not_utf8(path):
    path.write_bytes(b"\xff\xfe\x00" + path.read_bytes()[3:])


def edit_value(field, value):
    def plant(path):
        data = _json(path)
        data[field] = value
        path.write_text(json.dumps(data))
    return plant


def restamp(**provenance):
    """Rewrite a record through records.write_json (so its digest holds) with other provenance:
    a record made by another configuration or numerics mode."""
    def plant(path):
        data = _json(path)
        data["provenance"] = {**data["provenance"], **provenance}
        records.write_json(path, data)
    return plant


def symlink_to(other):
    """A symbolic link to another file (relative to the folder) in place of the file."""
    def plant(path):
        path.unlink()
        path.symlink_to(other)
    return plant


def folder(path):
    """A folder, holding a file, in place of the file."""
    path.unlink()
    (path / "inner").mkdir(parents=True)
    (path / "inner" / "note.txt").write_text("not a record\n")


def write(text):
    def plant(path):
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return plant


def copy_with_seal(other):
    """Another file of the same kind (relative to the folder), its seal with it, in place of the
    file: a copy that a checksum alone calls intact."""
    def plant(path):
        source = path.parent / other
        for suffix in ("", ".sha256"):
            shutil.copyfile(f"{source}{suffix}", f"{path}{suffix}")
    return plant


def made_from_another(input_name):
    """The product as it was, its seal saying it was made from another version of one of its
    inputs: a product left standing after the input was remade, which no checksum of its own finds."""
    def plant(path):
        seal = path.with_name(path.name + ".sha256")
        lines = seal.read_text().splitlines()
        at = lines.index(next(line for line in lines if line.endswith(f"  {input_name}")))
        lines[at] = f"# from {'0' * 64}  {input_name}"
        seal.write_text("\n".join(lines) + "\n")
    return plant


def short_run_at_full_path(path):
    """A step-1 record written where the `gpu` target's full-length record of the pair goes."""
    bundle = _json(path.parents[4] / "table9_step1" / "f64-mod47-L2d64h4.json")
    member = next(r for r in bundle["records"] if r["optimizer"] == "adam" and r["twin"] == "gauge"
                  and r["init_seed"] == 42 and r["twin_seed"] == 777)
    records.write_json(path, {k: v for k, v in member.items() if k != "set"})


# The numerics mode the workflow under test does not run in (its records name the other).
OTHER_NUMERICS = next(m for m in runtime.RECORDED.values() if m != runtime.recorded_mode())

# (id, file under the run, how it is corrupted, words the set-aside message must contain)
PROBES = [
    ("run-cut-short", f"{ZOO}/adam/lr0.01/seed42.json", truncate, "not valid JSON"),
    ("run-not-utf8", f"{ZOO}/gd/lr0.01/seed123.json", not_utf8, "not UTF-8"),
    ("run-edited", f"{ZOO}/muon/lr0.1/seed42.json", edit_value("rec", 0.001), "does not match the payload"),
    ("run-copied-to-another-lr", f"{ZOO}/adam/lr0.001/seed123.json",
     lambda p: shutil.copyfile(p.parents[1] / "lr0.01" / "seed123.json", p), "provenance.what.lr is 0.01"),
    ("run-other-settings", f"{ZOO}/gd/lr0.03/seed42.json", restamp(settings="sha256:" + "0" * 64),
     "other settings"),
    ("run-other-numerics", f"{ZOO}/muon/lr0.03/seed123.json", restamp(numerics=OTHER_NUMERICS),
     f"numerics mode {OTHER_NUMERICS!r}"),
    ("run-old-schema", "results/runs/dial/p1/lr0.01/seed42.json", edit_value("schema", "gaugelab.run/1"),
     "not a gaugelab record kind"),
    ("run-empty", "results/runs/dial/rms_p0/lr0.01/seed42.json", write(""), "not valid JSON"),
    ("run-not-an-object", "results/runs/second_size/gd/lr0.01/seed42.json", write("[1, 2]"), "not a JSON object"),
    ("run-missing-field", "results/runs/init_scale_0p01/adam/lr0.01/seed42.json", edit_value("curve", None),
     "field curve"),
    ("bundle-malformed", f"{ZOO}/sensitivity_shard0.json", write('{"schema": "gaugelab.bundle/1"}'),
     "not a gaugelab record kind"),
    ("bundle-member-edited", f"{ZOO}/sensitivity_shard1.json",
     lambda p: p.write_text(p.read_text().replace('"perturbation": 1e-07', '"perturbation": 2e-07', 1)),
     "does not match the payload"),
    ("twin-cut-short", f"{TWINS}/adam/gauge/init42_seed777.json", truncate, "not valid JSON"),
    ("twin-edited", f"{TWINS}/sgd/gauge/init42_seed777.json", edit_value("acc1", 1.0), "does not match the payload"),
    ("twin-wrong-kind", f"{TWINS}/muon/gauge/init42_seed777.json",
     lambda p: shutil.copyfile(p.parents[4] / "zoo" / "gd" / "lr0.01" / "seed42.json", p),
     "a gaugelab.run/2 record where a gaugelab.twin/2 record is expected"),
    ("table9-short-run-at-full-path", "results/runs/table9/f64-mod47-L2d64h4/adam/gauge/init42_seed777.json",
     short_run_at_full_path, "provenance.what.steps is 1, expected"),
    ("step1-bundle-cut-short", "results/runs/table9_step1/f64-mod47-L2d64h4.json", truncate, "not valid JSON"),
    ("nuclear-cut-short", "results/runs/nuclear_reference/seed42.json", truncate, "not valid JSON"),
    ("diagnosis-cut-short", "results/diagnose/runs/adam.json", truncate, "not valid JSON"),
    ("summary-cut-short", "results/zoo/summary.csv", truncate, "does not match summary.csv.sha256"),
    ("summary-edited", "results/twins/pairs.csv",
     lambda p: p.write_text(p.read_text().replace("adam", "Adam", 1)), "does not match pairs.csv.sha256"),
    ("comparison-part-cut-short", "results/twins/comparison.csv", truncate, "does not match"),
    ("run-symlink-to-another-cell", f"{ZOO}/lion/lr0.001/seed42.json", symlink_to("../lr0.003/seed42.json"),
     "a symbolic link (to ../lr0.003/seed42.json)"),
    ("run-folder", f"{ZOO}/adam/lr0.001/seed42.json", folder, "a folder, not a file"),
    ("table-symlink", "results/dial/fixed_lr.csv", symlink_to("envelope.csv"), "a symbolic link (to envelope.csv)"),
    ("intermediate-without-digest", "results/dial/envelope.csv",
     lambda p: p.with_name(p.name + ".sha256").unlink(), "no envelope.csv.sha256 beside it"),
    ("summary-of-another-experiment", "results/init_scale_0p001/summary.csv",
     copy_with_seal("../init_scale_0p01/summary.csv"), "a copy of results/init_scale_0p01/summary.csv"),
    # final products: tables, figures, macros, pages
    ("table-cut-short", "results/tables/table2.tex", truncate, "does not match table2.tex.sha256"),
    ("figure-emptied", "results/figures/figure1.png", write(b""), "does not match figure1.png.sha256"),
    ("macros-edited", "results/paper/macros.tex", lambda p: p.write_text(p.read_text().replace("0", "9", 1)),
     "does not match macros.tex.sha256"),
    ("page-emptied", "results/paper/comparison.html", write(""), "does not match comparison.html.sha256"),
    ("product-unsealed", "results/tables/d5.html", lambda p: p.with_name(p.name + ".sha256").unlink(),
     "no d5.html.sha256 beside it"),
    ("figure-of-another-figure", "results/figures/dial.png", copy_with_seal("figure2.png"),
     "a copy of results/figures/figure2.png"),
    ("table-of-another-summary", "results/tables/table2.html", made_from_another("results/zoo/summary.csv"),
     "made from results/zoo/summary.csv, which has changed since"),
]


SHORT_TABLE9 = next(rel for name, rel, _, _ in PROBES if name == "table9-short-run-at-full-path")


def snakemake(workdir, *args, check=True):
    cmd = [sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "--directory", str(workdir),
           "--configfile", str(SMOKE), *args]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"snakemake {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-5000:]}")
    return proc


def tree(workdir):
    """Every file under the run (Snakemake's own metadata aside) with its bytes' digest and mtime."""
    return {str(p.relative_to(workdir)): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
            for p in Path(workdir).rglob("*") if p.is_file() and ".snakemake" not in p.parts}


@pytest.fixture(scope="module")
def planted(smoke, tmp_path_factory):
    """A copy of the smoke run with every probe planted, before anything reads it."""
    work = tmp_path_factory.mktemp("probes") / "work"
    shutil.copytree(smoke, work, symlinks=True)
    for _, rel, plant, _ in PROBES:
        (work / rel).parent.mkdir(parents=True, exist_ok=True)  # the full-length Table 9 folder is new
        plant(work / rel)
    return work


READS = {"dry run": ["-n", "--cores", "2"], "lint": ["--lint"], "summary": ["--summary"], "unlock": ["--unlock"],
         "list": ["--list-rules"], "report": ["--report", "{outside}/report.html"]}


@pytest.fixture(scope="module")
def reads(planted):
    """Each way of reading the workflow, run on the planted copy: what it printed, and the tree
    before and after (the report is written outside it)."""
    out = {}
    for name, args in READS.items():
        args = [a.format(outside=planted.parent) for a in args]
        before = tree(planted)
        proc = snakemake(planted, *args, check=False)
        out[name] = (proc, before, tree(planted))
    return out


@pytest.fixture(scope="module")
def rerun(planted, reads):
    return snakemake(planted, "--cores", "2")


@pytest.mark.parametrize("name", READS)
def test_reading_the_workflow_changes_no_file(reads, name):
    proc, before, after = reads[name]
    assert after == before, {k for k in set(before) | set(after) if before.get(k) != after.get(k)}
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("probe", PROBES, ids=[p[0] for p in PROBES])
def test_the_dry_run_plans_to_set_each_bad_file_aside(reads, probe):
    proc, _, _ = reads["dry run"]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"set aside {probe[1]}: " in proc.stdout + proc.stderr


@pytest.mark.parametrize("probe", PROBES, ids=[p[0] for p in PROBES])
def test_the_run_sets_each_bad_file_aside_naming_the_problem(planted, rerun, probe):
    _, rel, _, words = probe
    lines = [line for line in rerun.stderr.splitlines() if line.startswith(f"gaugelab: set aside {rel} as ")]
    assert len(lines) == 1 and words in lines[0], (words, lines)
    kept = [p for p in (planted / "results/set_aside" / Path(rel).relative_to("results").parent).glob(
        Path(rel).name + ".*") if not p.name.endswith(".folder")]  # a folder set aside sits beside its note
    assert len(kept) == 1 and kept[0].is_file() and not kept[0].is_symlink()


def test_the_run_ends_byte_identical_to_the_undisturbed_one(smoke, planted, rerun):
    ours, theirs = tree(planted), tree(smoke)
    products = [p for p in theirs if p.startswith("results/") and not p.startswith("results/runs/")]
    differ = [p for p in products if ours.get(p, (None,))[0] != theirs[p][0]]
    assert not differ, differ
    runs = [p for p in theirs if p.startswith("results/runs/")]
    def untimed(root, p):
        return sealed.content(_json(root / p), sealed.TIMING)

    differ = [p for p in runs if p not in ours or untimed(planted, p) != untimed(smoke, p)]
    assert not differ, differ
    assert not (planted / SHORT_TABLE9).exists(), "the short Table 9 run must not stand in for a full one"
    assert not [p for p in ours if p.startswith("results/") and p not in theirs and "set_aside" not in p]


def test_a_second_run_has_nothing_to_do(planted, rerun):
    proc = snakemake(planted, "-n", "--cores", "2")
    assert "Nothing to be done" in proc.stdout + proc.stderr
