# Configuration, validation and path helpers shared by every rules file.
import csv
import os
import re
import sys
import threading
from pathlib import Path

# The repository's root: this file's folder's parent (workflow.basedir would be the main
# Snakefile's folder, another workflow's where this one is used as a module).
REPO = Path(workflow.current_basedir).parent
sys.path.insert(0, str(REPO / "src"))

# The numerics mode (docs/numerics.md): the `numerics` key, else GAUGELAB_NUMERICS, else native.
# Exported before the engine is imported (`import gaugelab` sets the portable contract's variables
# where it is asked for), so this process and every job it starts run under it.
if config.get("numerics") is not None:
    os.environ.update(GAUGELAB_NUMERICS=str(config["numerics"]))

from gaugelab import configuration as gaugelab_configuration
from gaugelab.core import records as gaugelab_records
from gaugelab.core import runtime as gaugelab_runtime
from gaugelab.attention import corpus as gaugelab_corpus
from gaugelab.sensing import controls as gaugelab_controls
from gaugelab.sensing import dial as gaugelab_dial
from gaugelab.sensing import dial_gpu as gaugelab_dial_gpu
from gaugelab.sensing import ladder as gaugelab_ladder
from gaugelab.sensing import phase as gaugelab_phase
from gaugelab.sensing import phase_fine as gaugelab_phase_fine
from gaugelab.sensing import dealing as gaugelab_dealing
from gaugelab.sensing import runner as gaugelab_runner
from gaugelab.paper import sensing_quantities as gaugelab_sq
from gaugelab.sensing import signum_audit as gaugelab_signum_audit
from gaugelab.paper import twin_summary as gaugelab_twin_summary
from gaugelab.attention import twins as gaugelab_twins
from gaugelab.attention import pairs as gaugelab_pairs

# The char-LM corpus's copy in the working folder (rules/data.smk fetches it).
CORPUS = "resources/tinyshakespeare/input.txt"

# Each config file read again strictly (a key given twice stops the run, naming the file, the key
# and its lines), the schema's defaults filled, anything unknown or out of range refused naming the
# key, portable numerics refused where they cannot hold, a configured corpus verified: one line per
# problem and no traceback, before any job (gaugelab.configuration.for_workflow). A job's own
# process (each cluster job reads this file again) leaves out building the diagnostic's optimizers.
NUMERICS = gaugelab_configuration.for_workflow(config, workflow.configfiles, workflow.is_main_process, CORPUS)

# Every sensing experiment by name with its resolved settings: the zoo and the arms of Section
# 5's controls, each derived from the zoo's testbed (gaugelab.sensing.controls).
SENSING = gaugelab_controls.sensing_experiments(config)
SENSING_EXPERIMENTS = list(SENSING)


def opt_in_targets():
    """Opt-in targets (`snakemake section8`), in the paper's order: target -> the report section
    its products fall in (gaugelab.paper.pages.PRODUCT_SECTIONS), its comparison part, its products
    and its sensing experiments. Once it has run (its part exists) or when it is asked
    for, its rows join the comparison, its records the numerics table and its products `rule all`
    and the report."""
    return {
        "signum_audit": {
            "section": "App. D.10",
            "part": "results/signum_audit/comparison.csv",
            "products": [*rules.signum_audit_diagnostics.output, *rules.signum_audit_tables.output],
            "experiments": list(AUDIT_ARMS.values()),
        },
        "ladder": {  # its runs are bundles of its own, not sensing experiments' records
            "section": "App. D.9",
            "part": "results/ladder/comparison.csv",
            "products": [*rules.ladder_table.output, *(rules.dial_gpu_table.output if DIAL_GPU else [])],
            "experiments": [],
        },
        "gpu": {  # its Table 9 pairs join Table 9's part; the phase diagram's fine grid has its own
            "section": "Section 8",
            "part": "results/phase_fine/comparison.csv",
            "products": [*rules.phase_fine_tables.output, *rules.phase_fine_figure.output],
            "experiments": [],
        },
        "section8": {
            "section": "Section 8",
            "part": "results/section8/comparison.csv",
            "products": [*rules.phase_tables.output, *rules.phase_figure.output],
            "experiments": list(PHASE_ARMS.values()),
        },
    }


def opt_in_ran():
    """The opt-in targets asked for on this command line or run before (their part exists)."""
    asked = set(getattr(workflow.dag_settings, "targets", None) or ())
    return [target for target, opt in opt_in_targets().items() if target in asked or Path(opt["part"]).exists()]


def comparison_parts(wildcards):
    """Every family's part of the comparison (a CSV of published-vs-reproduced rows), in the
    paper's order, and the parts of the opt-in targets that ran."""
    parts = [
        "results/zoo/comparison.csv",
        *[f"results/controls/{control}_comparison.csv" for control in CONTROL_TABLES],
        "results/twins/comparison.csv",
        "results/table9/comparison.csv",
        "results/dial/comparison.csv",
    ]
    return parts + [opt_in_targets()[target]["part"] for target in opt_in_ran()]


def default_targets(wildcards=None):
    """The default target, family by family in the paper's order: the one list `rule all`, the
    report's landing page and the appendix read. The census's table joins once the census has run
    (`snakemake census`), so the report shows it."""
    census_ran = all(Path(f"results/census/{library}.json").exists() for library in config["census"]["libraries"])
    return [
        *rules.zoo.input,
        *rules.zoo_controls.input,
        *rules.twins.input,
        *rules.table9.output,
        *rules.dial.input,
        *rules.diagnose.input,
        *(rules.census_table.output if census_ran else []),
        *rules.comparison.output,
        *rules.report_pages.output,
    ]


def opt_in_not_run(wildcards=None):
    """The report sections of the opt-in targets that have not run: section -> its targets."""
    ran, out = opt_in_ran(), {}
    for target, opt in opt_in_targets().items():
        if target not in ran:
            out.setdefault(opt["section"], []).append(target)
    return out


def gpu_products(wildcards=None):
    """The `gpu` target: Table 9's full-length pairs and the phase diagram's fine grid."""
    fine = [rules.phase_fine_tables.output, rules.phase_fine_figure.output, rules.phase_fine_comparison.output]
    return T9_FULL + [path for output in fine for path in output]


def opt_in_products(wildcards=None):
    return [path for target in opt_in_ran() for path in opt_in_targets()[target]["products"]]


wildcard_constraints:
    seed=r"\d+",
    shard=r"\d+",
    method=r"[a-z_]+",
    experiment=r"[a-z0-9_]+",
    optimizer=r"[a-z_]+",
    variant=r"gauge|identity|noise[0-9.e+-]+",
    init=r"\d+",
    model=r"[A-Za-z0-9-]+",


# How long each training job took at the default size in a measured run, for its message: the
# longest of the rule's jobs with that key, each row naming the machine and the run
# (benchmarks/job_times.csv, written by benchmarks/job_times.py from a run's benchmark files).
JOB_TIMES = {
    (row["rule"], row["key"]): row
    for row in csv.DictReader((REPO / "benchmarks/job_times.csv").read_text().splitlines())
}


def took(rule, key="", bound="about"):
    """'; at the default size about N s on a 2-core <CPU>', or nothing where no run measured it."""
    row = JOB_TIMES.get((rule, key))
    return "" if row is None else f"; at the default size {bound} {row['seconds']} s on a {row['machine']}"


def took_each(rule):
    """The measured seconds of every key of a rule, e.g. one per Table 9 configuration."""
    rows = [row for (name, _), row in JOB_TIMES.items() if name == rule]
    if not rows:
        return ""
    times = ", ".join(f"{row['key']} {row['seconds']} s" for row in rows)
    return f"; at the default size on a {rows[0]['machine']}: {times}"


def longest_first(rule, key=None):
    """A priority from the measured job time: the longest jobs start first, so that on many cores
    the chain each heads is not left for last (above the sensitivity reruns' 20; one step per 10 s).
    Without a key, the longest of the rule's keys."""
    rows = [row for (name, k), row in JOB_TIMES.items() if name == rule and key in (None, k)]
    return 20 + max((int(row["seconds"]) for row in rows), default=0) // 10


def lr_tag(lr):
    """Path form of a learning rate; float(lr_tag(x)) == x exactly."""
    return repr(float(lr))


def run_path(experiment, method, lr, seed):
    return f"results/runs/{experiment}/{method}/lr{lr_tag(lr)}/seed{seed}.json"


# A run is made once: a control arm's run that the zoo (or an earlier arm) makes too, the same
# method, lr, seed and settings digest (controls.run_sources), is read from that experiment's
# record by the arm's consumers; the arm's jobs train only its own runs.
RUN_SOURCE = gaugelab_controls.run_sources(SENSING, config["seeds"], config["dtype"])


def experiment_runs(experiment):
    """The records an experiment's consumers read, one per cell: its own, or the one it shares."""
    return [run_path(RUN_SOURCE[(experiment, *cell)], *cell) for cell in experiment_cells(experiment)]


# A sensing experiment's runs are dealt over SHARDS training jobs, seed by seed (dealing.deal), and
# its sensitivity reruns likewise: a speed choice. Under the portable numerics records do not
# depend on the grouping (testbed.Layout); under the native ones a run's last bits may.
SHARDS = config["shards"]
# Every seed has as many reruns as any other, and a job holds whole seeds: no more rerun jobs than
# seeds (a third job of two seeds would rerun nothing).
SENSITIVITY_SHARDS = min(SHARDS, len(config["seeds"]))


def experiment_cells(experiment):
    """Every (method, lr, seed) of an experiment, in a fixed order."""
    exp = SENSING[experiment]
    return [(method, lr, seed) for method, grid in exp["grids"].items() for lr in grid for seed in config["seeds"]]


def own_cells(experiment):
    """The cells whose record this experiment makes (no earlier experiment has the same run)."""
    return [cell for cell in experiment_cells(experiment) if RUN_SOURCE[(experiment, *cell)] == experiment]


def trained_cells(experiment):
    """The cells this experiment's jobs train: its own, but those a longer run's first steps give
    and those another experiment's jobs train in place of their first steps (RUN_HOST)."""
    elsewhere = RUN_PREFIX.keys() | RUN_HOST.keys()
    return [cell for cell in own_cells(experiment) if (experiment, *cell) not in elsewhere]


def shard_cells(experiment, shard):
    return gaugelab_dealing.deal(trained_cells(experiment), SHARDS, seed=lambda c: c[2], method=lambda c: c[0])[shard]


def shard_prefixes(experiment, shard):
    """The shorter runs (experiment, cell) whose records a training shard writes from its runs' first steps."""
    cells = set(shard_cells(experiment, shard))
    return [
        (short, tuple(cell))
        for (short, *cell), long in RUN_PREFIX.items()
        if long == experiment and tuple(cell) in cells
    ]


def shard_hosted(experiment, shard):
    """The longer runs of other arms (experiment, cell) that a training shard trains in place of
    its own runs that are their first steps (RUN_HOST)."""
    cells = set(shard_cells(experiment, shard))
    return [
        (arm, tuple(cell)) for (arm, *cell), host in RUN_HOST.items() if host == experiment and tuple(cell) in cells
    ]


def shard_others(experiment, shard):
    """Every run of another arm whose record a training shard writes: the shorter, then the longer."""
    return shard_prefixes(experiment, shard) + shard_hosted(experiment, shard)


def shard_records(experiment, shard):
    """Every record a training shard writes: its runs', then other arms' (shard_others)."""
    return [run_path(experiment, *cell) for cell in shard_cells(experiment, shard)] + [
        run_path(arm, *cell) for arm, cell in shard_others(experiment, shard)
    ]


def shard_checks(experiment, shard):
    """:func:`checked_runs` for every record a training shard writes."""
    return checked_runs(experiment, shard_cells(experiment, shard)) + [
        marker for arm, cell in shard_others(experiment, shard) for marker in checked_runs(arm, [cell])
    ]


def prefix_note(experiment, shard):
    """', and N runs of <arm> from their first steps' for each arm whose shorter runs a shard
    writes, and ', N of them as <arm>'s runs to the end' for each arm whose longer runs it trains."""
    notes = [", and {} runs of {} from their first steps", ", {} of them as {}'s runs to the end"]
    out = ""
    for note, pairs in zip(notes, (shard_prefixes(experiment, shard), shard_hosted(experiment, shard))):
        counts = {}
        for arm, _ in pairs:
            counts[arm] = counts.get(arm, 0) + 1
        out += "".join(note.format(n, arm) for arm, n in counts.items())
    return out


def prefix_arms(experiment):
    """The settings of the arms whose shorter runs this experiment's training writes, by name."""
    return {short: SENSING[short] for (short, *_), long in RUN_PREFIX.items() if long == experiment}


def hosted_arms(experiment):
    """The settings of the arms whose longer runs this experiment's training trains, by name."""
    return {arm: SENSING[arm] for (arm, *_), host in RUN_HOST.items() if host == experiment}


def rerun_shards(experiment):
    """The bundles of an experiment's first perturbed reruns, one per sensitivity job."""
    return [f"results/runs/{experiment}/sensitivity_shard{shard}.json" for shard in range(SENSITIVITY_SHARDS)]


def ensemble_perturbations():
    """The perturbations of the chaotic cells' ensemble beyond the first reruns'."""
    sens = config["sensitivity"]
    return gaugelab_sq.ensemble_perturbations(sens["perturbations"], sens["ensemble"])


def ensemble_bundle(experiment, shard):
    """The bundle of one job's share of an experiment's chaotic cells' ensemble of perturbed
    reruns: whole seeds, dealt like the first reruns, so no one job bounds the wall time."""
    return f"results/runs/{experiment}/sensitivity_ensemble_shard{shard}.json"


def ensemble_bundles(experiment):
    return [ensemble_bundle(experiment, shard) for shard in range(SENSITIVITY_SHARDS)]


def sensitivity_bundles(experiment):
    """Every perturbed rerun of an experiment: the first ones and the chaotic cells' ensemble."""
    ensemble = ensemble_bundles(experiment) if config["sensitivity"]["ensemble"] > 1 else []
    return rerun_shards(experiment) + ensemble


def rerun_sources(experiment):
    """The experiments whose perturbed reruns this one's take where they coincide
    (controls.reruns_made): those that make some of its runs (RUN_SOURCE) and rerun cells too."""
    if experiment not in SENSING:
        return []
    sources = dict.fromkeys(RUN_SOURCE[(experiment, *cell)] for cell in experiment_cells(experiment))
    return [source for source in sources if source != experiment and source in RERUN_EXPERIMENTS]


def shared_rerun_shards(experiment):
    return [bundle for source in rerun_sources(experiment) for bundle in rerun_shards(source)]


def shared_ensembles(experiment):
    return [bundle for source in rerun_sources(experiment) for bundle in ensemble_bundles(source)]


# Experiments with sensitivity reruns (gaugelab.paper.sensing_quantities.rerun_cells): the zoo, the
# controls' arms whose published rows rest on selected cells, and the dial.
RERUN_EXPERIMENTS = [e for e in [*SENSING_EXPERIMENTS, "dial"] if gaugelab_sq.has_reruns(e)]


SCHEDULE_ARMS = gaugelab_controls.schedule_arm_names(SENSING)  # mode -> sensing experiment
# A run is trained once when it is the first steps of a longer one (runner.prefix_budget): the
# decay control's const RMSProp runs are the 6x10^4-step arm's first 2x10^4 steps, its decay mode's
# runs the decay-full mode's up to their early stop. The longer run's training job writes the
# shorter run's record too (controls.run_prefixes), at the shorter run's own path. Only among the
# decay control's arms, which Table 6 always asks for together: a zoo run inside decay-full would
# make the zoo's own target wait on the control's full-horizon jobs.
RUN_PREFIX = gaugelab_controls.run_prefixes(
    {arm: SENSING[arm] for arm in SCHEDULE_ARMS.values()}, RUN_SOURCE, config["dtype"]
)
# From the zoo's side: a decay control run whose first steps are the zoo's run (decay-full's
# Muon: decayed at the same budget, without early stop) is trained by the zoo's job in place of
# the zoo's run, which it writes too (controls.run_hosts). The zoo's target then waits on no
# control job; it trains those runs to the end.
RUN_HOST = gaugelab_controls.run_hosts(
    {"zoo": SENSING["zoo"], **{arm: SENSING[arm] for arm in SCHEDULE_ARMS.values()}},
    RUN_SOURCE,
    config["dtype"],
    "zoo",
)
INIT_ARMS = {scale: gaugelab_controls.init_arm(scale) for scale in config["init_scale"]["inits"]}
CONTROL_TABLES = {
    "nuclear_reference": "results/controls/nuclear_reference.csv",
    "second_size": "results/second_size/summary.csv",
    "schedule": "results/controls/schedule.csv",
    "init_scale": "results/controls/init_scale.csv",
    "lr_sensitivity": "results/controls/lr_sensitivity.csv",
}
CONTROL_ARMS = {  # control -> {key: sensing experiment} whose sensitivity reruns it reads
    "nuclear_reference": {},
    "second_size": {"second_size": "second_size"},
    "schedule": SCHEDULE_ARMS,
    "init_scale": INIT_ARMS,
    "lr_sensitivity": {"lr_sensitivity": "lr_sensitivity"},
}


def control_rerun_arms(control):
    return {key: arm for key, arm in CONTROL_ARMS[control].items() if gaugelab_sq.has_reruns(arm)}


def cancel_reevaluation_timers():
    """Cancel the scheduler's pending re-evaluation timers once the run has ended: each would
    hold the process open for up to a `max-jobs-per-timespan` timespan with nothing left to do."""
    for timer in threading.enumerate():
        if isinstance(timer, threading.Timer):
            timer.cancel()


def landing_page():
    """The report's first page: the generated one (the description and the verdict) once it
    exists, the bare description before."""
    generated = Path("results/paper/report.rst")
    return str(generated.resolve()) if generated.exists() else "report/workflow.rst"


def rerun_settings(experiment):
    return config["dial"] if experiment == "dial" else SENSING[experiment]


def rerun_runs(experiment):
    return dial_runs() if experiment == "dial" else experiment_runs(experiment)


def dial_labels():
    return list(gaugelab_dial.variants(config["dial"]["ps"], config["dial"]["conventions"]))


def dial_runs():
    return [
        run_path("dial", name, lr, seed)
        for name in dial_labels()
        for lr in config["dial"]["lrs"]
        for seed in config["seeds"]
    ]


def twin_run_path(pair):
    """results/runs/twins/<model>/<optimizer>/<twin variant>/init<init>_seed<twin seed>.json"""
    model = gaugelab_twins.model_config(config["twins"]).name
    folder = f"results/runs/twins/{model}/{pair.optimizer}/{pair.variant}"
    return f"{folder}/init{pair.init_seed}_seed{pair.twin_seed}.json"


def twin_pair(wildcards):
    """The pair a twin record's path names."""
    twin, sigma = gaugelab_pairs.parse_variant(wildcards.variant)
    return gaugelab_pairs.Pair(wildcards.optimizer, twin, int(wildcards.init), int(wildcards.seed), sigma)


def twin_runs(*set_names):
    """Record paths of the named run sets (default: every set), each pair once."""
    sets = gaugelab_twin_summary.sets_of(config["twins"])
    chosen = {name: pairs for name, pairs in sets.items() if not set_names or name in set_names}
    return [twin_run_path(pair) for pair in gaugelab_twin_summary.unique_pairs(chosen)]


def comparison_records():
    """Every record the comparison rests on (the numerics table reads them): the default target's
    and those of the opt-in targets that ran."""
    ran = opt_in_ran()
    skipped = {e for target, opt in opt_in_targets().items() if target not in ran for e in opt["experiments"]}
    paths = [p for e in SENSING_EXPERIMENTS if e not in skipped for p in experiment_runs(e)]
    paths += [p for e in RERUN_EXPERIMENTS for p in sensitivity_bundles(e)]
    paths += dial_runs() + twin_runs()
    paths += [gaugelab_float64.step1_path(model) for model in config["table9"]["configs"]]
    return list(dict.fromkeys(paths))  # a run shared by experiments once


# --- records checked before use (records.problem) ---------------------------------------------
# A record the workflow finds that cannot be used (cut short, malformed, edited, another run than
# its path names, made with other settings or numerics than now asked for) is moved to
# results/set_aside/<its path>.<digest of its bytes> by a set_aside job, an input of the job that
# makes the record, which then reruns; so does everything derived from it. Parsing, a dry run, lint,
# report, unlock and cluster jobs only read: the move is a job of the run. A set-aside file stays
# an input of its record's job (that keeps the job's input set stable once it has rerun).
SET_ASIDE = "results/set_aside"
SET_ASIDE_REASONS = {}  # set-aside path -> why


def _set_aside_files():
    """Original path -> its set-aside files (<path>.<12 hex digits>; not a folder set aside
    beside its note, <note>.folder, nor what it holds)."""
    found = {}
    for marker in Path(SET_ASIDE).rglob("*") if Path(SET_ASIDE).is_dir() else []:
        inside = marker.relative_to(SET_ASIDE).parts
        if not re.fullmatch(r".+\.[0-9a-f]{12}", marker.name) or any(p.endswith(".folder") for p in inside):
            continue
        original = f"results/{marker.relative_to(SET_ASIDE)}".rsplit(".", 1)[0]
        found.setdefault(original, []).append(str(marker))
    return found


SET_ASIDE_FILES = _set_aside_files()


def checked(path, kind, expected=None):
    """The set-aside inputs of the job that makes ``path``: those of earlier runs, and one more if
    the file there now cannot be used as the ``kind`` record with provenance ``expected``."""
    markers = list(SET_ASIDE_FILES.get(path, []))
    reason = gaugelab_records.problem(path, kind, expected)
    if reason is not None:
        marker = f"{SET_ASIDE}/{path.removeprefix('results/')}.{gaugelab_records.raw_digest(path)}"
        SET_ASIDE_REASONS[marker] = reason
        markers.append(marker)
    return sorted(set(markers))


def checked_files(*paths):
    """:func:`checked` for sealed files (gaugelab.core.sealed: intermediate tables and final products)."""
    return [marker for path in paths for marker in checked(path, gaugelab_records.SEALED)]


def usable(path, kind, expected=None):
    """Whether an existing optional record (e.g. a full-length Table 9 pair) can be used as is."""
    return Path(path).exists() and gaugelab_records.problem(path, kind, expected) is None


def run_provenance(experiment, method, lr, seed):
    """The provenance a sensing or dial run record at its path must state (runner.provenance)."""
    exp = config["dial"] if experiment == "dial" else SENSING[experiment]
    return gaugelab_runner.provenance(experiment, exp, method, float(lr), int(seed), 0.0, config["dtype"])


def checked_runs(experiment, cells):
    """:func:`checked` for the run records of ``cells`` ((method, lr, seed) each)."""
    return [
        marker
        for method, lr, seed in cells
        for marker in checked(
            run_path(experiment, method, lr, seed),
            gaugelab_records.SCHEMA,
            run_provenance(experiment, method, lr, seed),
        )
    ]


# --- the GPU-protocol sensing arms: App. D.9's ladder and its dial arm (`snakemake ladder`;
# rules/ladder.smk) and the phase diagram's fine grid (part of `snakemake gpu`; rules/section8.smk)
# Each arm with its scaled grids and seeds (gaugelab.sensing.ladder, .dial_gpu, .phase_fine), by
# family, the folder of its bundles; one bundle per (arm, method, stage): the selection over the
# grid, and for the ladder the extension seeds at lr* and the cosine-all reruns.
LADDER = gaugelab_ladder.arms(config)
DIAL_GPU = gaugelab_dial_gpu.arms(config)
PHASE_FINE = gaugelab_phase_fine.arms(config)
GPU_ARMS = {"ladder": LADDER, "dial_gpu": DIAL_GPU, "phase_fine": PHASE_FINE}


def gpu_bundle(family, arm, method, stage):
    return f"results/runs/{family}/{arm}/{method}/{stage}.json"


def gpu_keys(family):
    """Every (family, arm, method, stage) one family runs, in its table's order."""
    return [
        [family, arm, method, stage]
        for arm, exp in GPU_ARMS[family].items()
        for method in exp["grids"]
        for stage in gaugelab_ladder.stages(exp)
    ]


def gpu_arm_inputs(wildcards):
    """A later stage reads lr* from its selection's bundle; the set-aside inputs of the bundle."""
    w = wildcards
    what, settings = gaugelab_ladder.bundle_identity(w.arm, GPU_ARMS[w.family][w.arm], w.method, w.stage)
    path = gpu_bundle(w.family, w.arm, w.method, w.stage)
    inputs = {"set_aside": checked(path, gaugelab_records.BUNDLE_SCHEMA, gaugelab_records.provenance(what, settings))}
    if w.stage != gaugelab_ladder.SELECTION:
        inputs["selection"] = gpu_bundle(w.family, w.arm, w.method, gaugelab_ladder.SELECTION)
    return inputs
