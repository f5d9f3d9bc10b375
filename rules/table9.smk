# Table 9: the float64 twins at scale (attention.md §2, §4, §10.4, §11.3, §12.3).
#
# - table9_step0: step 0 of the twins of one configuration and init seed (the base and each copy 2
#   before any update: the same for every optimizer), one CPU job each;
# - table9_step1: steps 0 and 1 of the pairs of one configuration that share a copy 1, one CPU
#   job each, step 0 read from table9_step0 (the discriminating signal; in the default target);
#   table9_step1_bundle: the configuration's parts as its one step-1 bundle.
# - table9_full: the full-length pairs of one configuration, batched, tagged resources gpu=1
#   (the `gpu` target).
# - table9: the table from whatever records exist (step columns always, final columns where the
#   full runs exist), and its published-versus-reproduced part.
# - merge_extension: EXTENSION (attention.md §13), not in the paper and not in the default target.

from gaugelab.attention import merge as gaugelab_merge
from gaugelab.attention import configs as gaugelab_configs
from gaugelab.attention import float64 as gaugelab_float64
from gaugelab.attention import float64_step1 as gaugelab_float64_step1
from gaugelab.attention import pairs as gaugelab_pairs


include: "checks/table9.smk"


T9 = config["table9"]
T9_PAIRS = gaugelab_pairs.Pair.listed(T9["pairs"])
# What determines a run besides its key, step budget and device; the merge block and the lists
# of configurations and pairs do not (a full-length job reruns only when its own inputs change).
T9_SETTINGS = gaugelab_float64.job_settings(T9)


T9_FULL = gaugelab_float64.full_run_paths(T9["configs"], T9_PAIRS)
# The step-1 subset is one job per configuration and copy 1 (optimizer, init seed: the pairs that
# share it, pairs.by_base), so no job is long; their parts make the configuration's one bundle.
T9_COPY1 = gaugelab_pairs.by_base(T9_PAIRS)


# The char-LM's verified corpus, for the text configuration only.
T9_CORPUS = lambda wildcards: [CORPUS] if wildcards.model == gaugelab_configs.TEXT else []
# Full-length records on disk are folded into Table 9 when they can be used (rules/checks/table9.smk:
# t9_existing) and set aside when not (t9_unusable).


rule table9_step0:
    input:
        corpus=T9_CORPUS,
        set_aside=t9_step0_checked,
    output:
        gaugelab_float64.step0_path("{model}", "{init}"),
    log:
        "logs/table9/step0/{model}/init{init}.log",
    benchmark:
        "logs/benchmarks/table9/step0/{model}/init{init}.tsv"
    priority: longest_first("table9_step1")  # the step-1 jobs wait on it
    conda:
        "../envs/gaugelab.yaml"
    threads: 1
    resources:
        mem_mb=6000,
        runtime=60,
    params:
        dtype=T9["dtype"],
        twins=lambda w: [p.row for p in t9_twins(w.init)],
        device=T9["step1_device"],
    message:
        f"Table 9, step 0 of the float64 twins of {{wildcards.model}} at init {{wildcards.init}} (the base and "
        f"each copy 2 before any update, read by every optimizer's step-1 job){took_each('table9_step0')}"
    script:
        "../scripts/table9_step0.py"


rule table9_step1:
    input:
        corpus=T9_CORPUS,
        step0=lambda w: gaugelab_float64.step0_path(w.model, w.init),
        set_aside=t9_step1_part_checked,
    output:
        gaugelab_float64.step1_part_path("{model}", "{optimizer}", "{init}"),
    log:
        "logs/table9/step1/{model}/{optimizer}_init{init}.log",
    benchmark:
        "logs/benchmarks/table9/step1/{model}/{optimizer}_init{init}.tsv"
    priority: longest_first("table9_step1")
    conda:
        "../envs/gaugelab.yaml"
    threads: 1
    resources:
        mem_mb=6000,
        runtime=60,
    params:
        settings=T9_SETTINGS,
        pairs=lambda w: [p.row for p in T9_COPY1[(w.optimizer, int(w.init))]],
        device=T9["step1_device"],
    message:
        f"Table 9, step-1 subset: steps 0 and 1 of the float64 pairs of {{wildcards.model}} that share "
        f"{{wildcards.optimizer}}'s copy 1 at init {{wildcards.init}}{took_each('table9_step1')}"
    script:
        "../scripts/table9_step1.py"


rule table9_step1_bundle:
    input:
        parts=lambda w: [gaugelab_float64.step1_part_path(w.model, *base) for base in T9_COPY1],
        set_aside=t9_step1_checked,
    output:
        gaugelab_float64.step1_path("{model}"),
    log:
        "logs/table9/step1/{model}.log",
    conda:
        "../envs/gaugelab.yaml"
    params:
        settings=T9_SETTINGS,
        pairs=[p.row for p in T9_PAIRS],
        parts=[[p.row for p in pairs] for pairs in T9_COPY1.values()],
    message:
        "Table 9, step-1 subset of {wildcards.model}: its copy 1s' parts as one bundle"
    script:
        "../scripts/table9_step1_bundle.py"


# One full-length job per configuration: its 18 pairs, each copy 1 once beside copy 2 of every pair
# that shares it, in the device's batches (float64_train.train_pairs: on a GPU one batched program
# of all 23 copies, or programs of at most table9.max_copies; on the CPU one per copy 1), one record
# per pair.
rule table9_full:
    input:
        corpus=T9_CORPUS,
        set_aside=t9_full_checked(T9_PAIRS),
    output:
        [gaugelab_float64.full_run_path("{model}", pair) for pair in T9_PAIRS],
    log:
        "logs/table9/full/{model}.log",
    benchmark:
        "logs/benchmarks/table9/full/{model}.tsv"
    conda:
        "../envs/cuda.yaml"
    threads: 2
    resources:
        gpu=1,
        mem_mb=16000,
        runtime=360,
    params:
        settings=T9_SETTINGS,
        pairs=[p.row for p in T9_PAIRS],
        steps=lambda wildcards: T9["steps"][wildcards.model],
        device=T9["device"],
        max_copies=T9["max_copies"],
    message:
        f"Table 9, full length: the {len(T9_PAIRS)} float64 pairs of {{wildcards.model}}"
    script:
        "../scripts/table9_full.py"


rule table9:
    input:
        step1=[gaugelab_float64.step1_path(model) for model in T9["configs"]],
        full=t9_existing,
        set_aside=lambda w: t9_unusable(w) + checked_files("results/tables/table9.tex", "results/tables/table9.html"),
    output:
        tex="results/tables/table9.tex",
        html=report(
            "results/tables/table9.html",
            caption="../report/table9.rst",
            category="Table 9: float64 twins",
            labels={"item": "Table 9"},
        ),
    log:
        "logs/tables/table9.log",
    conda:
        "../envs/gaugelab.yaml"
    message:
        "Table 9: float64 twins (step-1 columns always, full columns where full runs exist)"
    script:
        "../scripts/table9.py"


rule table9_comparison:
    input:
        step1=[gaugelab_float64.step1_path(model) for model in T9["configs"]],
        full=t9_existing,
        set_aside=lambda w: t9_unusable(w) + checked_files("results/table9/comparison.csv"),
    output:
        "results/table9/comparison.csv",
    log:
        "logs/table9/comparison.log",
    conda:
        "../envs/gaugelab.yaml"
    message:
        "Table 9: published versus reproduced"
    script:
        "../scripts/table9_comparison.py"


rule gpu:
    input:
        gpu_products,
    message:
        "Table 9's full-length float64 pairs and the phase diagram's fine grid (GPU jobs); rerun the default target afterwards to tabulate them"


# --- EXTENSION (attention.md §13): per-head Procrustes merging of float64 twins ----------------

MERGE = T9["merge"]


rule merge_extension_pair:
    input:
        lambda w: checked(
            f"results/extension/merge/{w.model}/{w.optimizer}/{w.variant}/init{w.init}_seed{w.seed}.json",
            gaugelab_records.MERGE_SCHEMA,
            gaugelab_merge.provenance(
                gaugelab_float64.provenance(w.model, twin_pair(w), T9_SETTINGS, MERGE["steps"]), MERGE["tau"]
            ),
        ),
    output:
        "results/extension/merge/{model}/{optimizer}/{variant}/init{init}_seed{seed}.json",
    log:
        "logs/extension/merge/{model}/{optimizer}/{variant}/init{init}_seed{seed}.log",
    conda:
        "../envs/gaugelab.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        settings=T9_SETTINGS,
        steps=MERGE["steps"],
        tau=MERGE["tau"],
    message:
        "EXTENSION, merging: train and merge the {wildcards.optimizer} {wildcards.variant} twin of {wildcards.model} (init {wildcards.init}, twin seed {wildcards.seed})"
    script:
        "../scripts/merge_extension_pair.py"


rule merge_extension_table:
    input:
        runs=[
            f"results/extension/merge/{MERGE['config']}/{p.optimizer}/{p.variant}/init{p.init_seed}_seed{p.twin_seed}.json"
            for p in gaugelab_pairs.Pair.listed(MERGE["pairs"])
        ],
        set_aside=checked_files(
            "results/extension/merge_extension.csv",
            "results/extension/merge_extension.tex",
            "results/extension/merge_extension.html",
        ),
    output:
        csv="results/extension/merge_extension.csv",
        tex="results/extension/merge_extension.tex",
        html=report(
            "results/extension/merge_extension.html",
            caption="../report/merge_extension.rst",
            category="Extensions (not in the paper)",
            labels={"item": "Twin merging (extension)"},
        ),
    log:
        "logs/extension/merge_extension.log",
    conda:
        "../envs/gaugelab.yaml"
    message:
        "EXTENSION, merging: the merged-model table"
    script:
        "../scripts/merge_extension_table.py"


rule merge_extension:
    input:
        rules.merge_extension_table.output,
    message:
        "EXTENSION (not in the paper): per-head Procrustes merging of twins"
