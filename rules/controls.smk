# Section 5's controls (App. D.1, D.2, D.4, D.7) and Table 2's convex reference row.
#
# Each control's arms are sensing experiments (gaugelab.sensing.controls.sensing_experiments, listed in
# SENSING by rules/common.smk): their per-seed training jobs and summaries are the zoo's rules
# (rules/sensing.smk). The rules below extract each control, render it and compare it.

from gaugelab.sensing import nuclear as gaugelab_nuclear


# Table 2's reference row: min-nuclear-norm interpolant per seed (float64 ADMM) -----------------
rule nuclear_reference_run:
    input:
        lambda w: checked(
            f"results/runs/nuclear_reference/seed{w.seed}.json",
            gaugelab_records.CONVEX_SCHEMA,
            gaugelab_nuclear.provenance(
                config["zoo"]["n"],
                config["zoo"]["rank"],
                config["zoo"]["measurements_per_dof"],
                int(w.seed),
                **config["nuclear_reference"],
            ),
        ),
    output:
        "results/runs/nuclear_reference/seed{seed}.json",
    log:
        "logs/nuclear_reference/seed{seed}.log",
    benchmark:
        "logs/benchmarks/nuclear_reference/seed{seed}.tsv"
    conda:
        "../envs/gaugelab.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=30,
    params:
        seed=lambda w: int(w.seed),
        testbed={k: config["zoo"][k] for k in ("n", "rank", "measurements_per_dof")},
        settings=config["nuclear_reference"],
    message:
        f"Table 2 reference: min-nuclear-norm interpolant (float64 ADMM), seed {{wildcards.seed}}{took('nuclear_reference_run')}"
    script:
        "../scripts/nuclear_reference_run.py"


rule nuclear_reference_table:
    input:
        runs=expand("results/runs/nuclear_reference/seed{seed}.json", seed=config["seeds"]),
        set_aside=checked_files(
            "results/controls/nuclear_reference.csv",
            "results/tables/nuclear_reference.tex",
            "results/tables/nuclear_reference.html",
        ),
    output:
        csv="results/controls/nuclear_reference.csv",
        tex="results/tables/nuclear_reference.tex",
        html=report(
            "results/tables/nuclear_reference.html",
            caption="../report/nuclear_reference.rst",
            category="Section 5 — optimizer zoo",
            labels={"item": "min-nuclear-norm reference"},
        ),
    log:
        "logs/nuclear_reference/table.log",
    conda:
        "../envs/gaugelab.yaml"
    message:
        "Table 2 reference row: per seed and mean"
    script:
        "../scripts/nuclear_reference_table.py"


# Section 5: the second size ----------------------------------------------------------------------
rule second_size_table:
    input:
        "results/second_size/summary.csv",
        set_aside=checked_files("results/tables/second_size.tex", "results/tables/second_size.html"),
    output:
        tex="results/tables/second_size.tex",
        html=report(
            "results/tables/second_size.html",
            caption="../report/second_size.rst",
            category="Section 5 — controls",
            labels={"item": "second size"},
        ),
    log:
        "logs/second_size/table.log",
    conda:
        "../envs/gaugelab.yaml"
    params:
        tol=SENSING["second_size"]["tol"],
    message:
        "Section 5 second size: selected rows"
    script:
        "../scripts/second_size_table.py"


# App. D.4: initialisation scale ---------------------------------------------------------------
rule init_scale_table:
    input:
        summaries=[f"results/{arm}/summary.csv" for arm in INIT_ARMS.values()],
        zoo_summary="results/zoo/summary.csv",
        set_aside=checked_files(
            "results/controls/init_scale.csv",
            "results/controls/init_scale_checks.csv",
            "results/tables/init_scale.tex",
            "results/tables/init_scale.html",
        ),
    output:
        csv="results/controls/init_scale.csv",
        checks="results/controls/init_scale_checks.csv",
        tex="results/tables/init_scale.tex",
        html=report(
            "results/tables/init_scale.html",
            caption="../report/init_scale.rst",
            category="Section 5 — controls",
            labels={"item": "init scale"},
        ),
    log:
        "logs/init_scale/table.log",
    conda:
        "../envs/gaugelab.yaml"
    params:
        inits=list(INIT_ARMS),
        zoo_init=config["zoo"]["init"],
        tol=config["zoo"]["tol"],
    message:
        "App. D.4 init scale: selected rows and the split check per scale"
    script:
        "../scripts/init_scale_table.py"


# App. D.2: learning-rate sensitivity ----------------------------------------------------------
rule lr_sensitivity_table:
    input:
        "results/lr_sensitivity/summary.csv",
        set_aside=checked_files(
            "results/controls/lr_sensitivity.csv",
            "results/tables/lr_sensitivity.tex",
            "results/tables/lr_sensitivity.html",
        ),
    output:
        csv="results/controls/lr_sensitivity.csv",
        tex="results/tables/lr_sensitivity.tex",
        html=report(
            "results/tables/lr_sensitivity.html",
            caption="../report/lr_sensitivity.rst",
            category="Section 5 — controls",
            labels={"item": "lr sensitivity"},
        ),
    log:
        "logs/lr_sensitivity/table.log",
    conda:
        "../envs/gaugelab.yaml"
    params:
        grids=SENSING["lr_sensitivity"]["grids"],
        tol=SENSING["lr_sensitivity"]["tol"],
    message:
        "App. D.2 lr sensitivity: every lr, the flow-limit row flagged"
    script:
        "../scripts/lr_sensitivity_table.py"


rule lr_sensitivity_figure:
    input:
        "results/controls/lr_sensitivity.csv",
        set_aside=checked_files("results/figures/lr_sensitivity.pdf", "results/figures/lr_sensitivity.png"),
    output:
        pdf="results/figures/lr_sensitivity.pdf",
        png=report(
            "results/figures/lr_sensitivity.png",
            caption="../report/lr_sensitivity_figure.rst",
            category="Section 5 — controls",
            labels={"item": "lr sensitivity figure"},
        ),
    log:
        "logs/figures/lr_sensitivity.log",
    conda:
        "../envs/gaugelab.yaml"
    message:
        "App. D.2 figure: recovery against learning rate"
    script:
        "../scripts/lr_sensitivity_figure.py"


# App. D.1 / Table 6 and App. D.7: the decay control ---------------------------------------------
rule table6:
    input:
        runs=[path for arm in SCHEDULE_ARMS.values() for path in experiment_runs(arm)],
        set_aside=checked_files(
            "results/controls/schedule.csv",
            "results/controls/schedule_counts.csv",
            "results/controls/schedule_deltas.csv",
            "results/tables/table6.tex",
            "results/tables/table6.html",
        ),
    output:
        csv="results/controls/schedule.csv",
        counts="results/controls/schedule_counts.csv",
        deltas="results/controls/schedule_deltas.csv",
        tex="results/tables/table6.tex",
        html=report(
            "results/tables/table6.html",
            caption="../report/table6.rst",
            category="Section 5 — controls",
            labels={"item": "Table 6"},
        ),
    log:
        "logs/schedule_control/table6.log",
    conda:
        "../envs/gaugelab.yaml"
    params:
        modes=SCHEDULE_ARMS,
        grids={mode: SENSING[arm]["grids"] for mode, arm in SCHEDULE_ARMS.items()},
        tol=config["zoo"]["tol"],
        rmsprop_budget=config["schedule_control"]["rmsprop_budget"],
    message:
        "Table 6: the decay control under rec-sel and spd-sel, midpoint counts"
    script:
        "../scripts/table6.py"


# Section 5 / §8: the three classification counts with the numbers they rest on ---------------
rule classification:
    input:
        zoo_summary="results/zoo/summary.csv",
        schedule="results/controls/schedule.csv",
        set_aside=checked_files(
            "results/controls/classification.csv",
            "results/tables/classification.tex",
            "results/tables/classification.html",
        ),
    output:
        csv="results/controls/classification.csv",
        tex="results/tables/classification.tex",
        html=report(
            "results/tables/classification.html",
            caption="../report/classification.rst",
            category="Section 5 — controls",
            labels={"item": "classification counts"},
        ),
    log:
        "logs/classification.log",
    conda:
        "../envs/gaugelab.yaml"
    message:
        "Classification counts: clean split, midpoint under a shared decay, rank split"
    script:
        "../scripts/classification.py"


# Published versus reproduced, one part per control, with the sensitivity of its cells ----------


rule control_comparison:
    input:
        table=lambda w: CONTROL_TABLES[w.control],
        checks=lambda w: ["results/controls/init_scale_checks.csv"] if w.control == "init_scale" else [],
        runs=lambda w: [p for arm in control_rerun_arms(w.control).values() for p in experiment_runs(arm)],
        sensitivity=lambda w: [p for arm in control_rerun_arms(w.control).values() for p in sensitivity_bundles(arm)],
        set_aside=lambda w: checked_files(f"results/controls/{w.control}_comparison.csv"),
    output:
        "results/controls/{control}_comparison.csv",
    log:
        "logs/controls/{control}_comparison.log",
    wildcard_constraints:
        control="|".join(CONTROL_TABLES),
    conda:
        "../envs/gaugelab.yaml"
    params:
        control=lambda w: w.control,
        # key -> the records of one arm, base runs (some may be the zoo's) and its perturbed reruns
        arms=lambda w: {
            key: {"runs": experiment_runs(arm), "sensitivity": sensitivity_bundles(arm)}
            for key, arm in control_rerun_arms(w.control).items()
        },
        tol=config["zoo"]["tol"],
    message:
        "Section 5 controls, {wildcards.control}: published versus reproduced"
    script:
        "../scripts/control_comparison.py"


# Targets: one per control, and all of them ----------------------------------------------------
rule convex_reference:
    input:
        rules.nuclear_reference_table.output,
        "results/controls/nuclear_reference_comparison.csv",
    message:
        "Table 2's min-nuclear-norm reference row"


rule second_size:
    input:
        rules.second_size_table.output,
        "results/controls/second_size_comparison.csv",
    message:
        "Section 5: the second size"


rule init_scale:
    input:
        rules.init_scale_table.output,
        "results/controls/init_scale_comparison.csv",
    message:
        "App. D.4: the initialisation scale"


rule lr_sensitivity:
    input:
        rules.lr_sensitivity_table.output,
        rules.lr_sensitivity_figure.output,
        "results/controls/lr_sensitivity_comparison.csv",
    message:
        "App. D.2: learning-rate sensitivity"


rule schedule_control:
    input:
        rules.table6.output,
        "results/controls/schedule_comparison.csv",
    message:
        "App. D.1 / D.7: the decay control (Table 6) and RMSProp"


rule zoo_controls:
    input:
        rules.convex_reference.input,
        rules.second_size.input,
        rules.init_scale.input,
        rules.lr_sensitivity.input,
        rules.schedule_control.input,
        rules.classification.output,
    message:
        "Section 5's controls and Table 2's reference row"
