# Section 8 (opt-in: `snakemake section8`): the Muon spectral-tail phase diagram on the CPU coarse
# grid and its schedule control (sensing.md §13.1-13.2). Its arms are ordinary sensing experiments
# (rules/sensing.smk trains them); here the tables, the crossing tau*, the figure and the rows.

PHASE_ARMS = gaugelab_phase.arm_names(config)  # (mode, tau) -> sensing experiment
PHASE_TABLES = [
    "results/section8/selected.csv",
    "results/section8/phase.csv",
    "results/section8/schedule.csv",
    "results/tables/phase.tex",
    "results/tables/phase.html",
    "results/tables/phase_schedule.tex",
    "results/tables/phase_schedule.html",
]


rule phase_tables:
    input:
        summaries=[f"results/{arm}/summary.csv" for arm in PHASE_ARMS.values()],
        set_aside=checked_files(*PHASE_TABLES),
    output:
        selected=PHASE_TABLES[0],
        phase=PHASE_TABLES[1],
        schedule=PHASE_TABLES[2],
        tex=PHASE_TABLES[3],
        html=report(
            PHASE_TABLES[4],
            caption="../report/phase_table.rst",
            category="Section 8 — phase diagram",
            labels={"item": "phase diagram, coarse grid"},
        ),
        schedule_tex=PHASE_TABLES[5],
        schedule_html=report(
            PHASE_TABLES[6],
            caption="../report/phase_schedule.rst",
            category="Section 8 — phase diagram",
            labels={"item": "schedule control"},
        ),
    log:
        "logs/section8/tables.log",
    conda:
        "../envs/gaugelab.yaml"
    params:
        arms=[[mode, tau] for mode, tau in PHASE_ARMS],
    message:
        "Section 8: the phase diagram's selected rows, the crossing tau* and the schedule control"
    script:
        "../scripts/phase_tables.py"


rule phase_figure:
    input:
        selected="results/section8/selected.csv",
        set_aside=checked_files("results/figures/phase.pdf", "results/figures/phase.png"),
    output:
        pdf="results/figures/phase.pdf",
        png=report(
            "results/figures/phase.png",
            caption="../report/phase_figure.rst",
            category="Section 8 — phase diagram",
            labels={"item": "phase figure"},
        ),
    log:
        "logs/section8/figure.log",
    conda:
        "../envs/gaugelab.yaml"
    message:
        "Section 8: the phase figure (rec at lr* against the tail amplitude)"
    script:
        "../scripts/phase_figure.py"


rule phase_comparison:
    input:
        selected="results/section8/selected.csv",
        set_aside=checked_files("results/section8/comparison.csv"),
    output:
        "results/section8/comparison.csv",
    log:
        "logs/section8/comparison.log",
    conda:
        "../envs/gaugelab.yaml"
    message:
        "Section 8: published versus reproduced"
    script:
        "../scripts/phase_comparison.py"


# The target: its tables, figure and comparison rows. Once they exist, the default target merges
# the rows into results/paper/comparison.csv and the products into the report.
rule section8:
    input:
        rules.phase_tables.output,
        rules.phase_figure.output,
        rules.phase_comparison.output,


# --- the GPU fine grid (App. D.9, sensing.md §13.3; part of `snakemake gpu`): the tail targets
# under the GPU protocol at two sizes, trained by rules/ladder.smk's gpu_sensing_train; here the
# table with every crossing, the figure of §15.4 and the fine tau*'s row ----------------------

PHASE_FINE_TABLES = [
    "results/phase_fine/selected.csv",
    "results/tables/phase_fine.tex",
    "results/tables/phase_fine.html",
]


rule phase_fine_tables:
    input:
        bundles=[gpu_bundle(*key) for key in gpu_keys("phase_fine")],
        set_aside=checked_files(*PHASE_FINE_TABLES),
    output:
        selected=PHASE_FINE_TABLES[0],
        tex=PHASE_FINE_TABLES[1],
        html=report(
            PHASE_FINE_TABLES[2],
            caption="../report/phase_fine_table.rst",
            category="Section 8 — phase diagram",
            labels={"item": "phase diagram, GPU fine grid"},
        ),
    log:
        "logs/phase_fine/tables.log",
    conda:
        "../envs/gaugelab.yaml"
    params:
        stages=[key[1:] for key in gpu_keys("phase_fine")],
        arms=PHASE_FINE,
    message:
        "The phase diagram's GPU fine grid: S5 per tail and method over all seeds, and every crossing"
    script:
        "../scripts/phase_fine_tables.py"


rule phase_fine_figure:
    input:
        selected="results/phase_fine/selected.csv",
        set_aside=checked_files("results/figures/phase_fine.pdf", "results/figures/phase_fine.png"),
    output:
        pdf="results/figures/phase_fine.pdf",
        png=report(
            "results/figures/phase_fine.png",
            caption="../report/phase_fine_figure.rst",
            category="Section 8 — phase diagram",
            labels={"item": "phase figure, GPU fine grid"},
        ),
    log:
        "logs/phase_fine/figure.log",
    conda:
        "../envs/gaugelab.yaml"
    params:
        figure=config["phase_fine"]["figure"],
        seeds=lambda w: config["phase_fine"]["sizes"][config["phase_fine"]["figure"]["size"]]["seeds"],
    message:
        "The phase figure of the paper (sensing.md §15.4) from the GPU fine grid"
    script:
        "../scripts/phase_fine_figure.py"


rule phase_fine_comparison:
    input:
        selected="results/phase_fine/selected.csv",
        set_aside=checked_files("results/phase_fine/comparison.csv"),
    output:
        "results/phase_fine/comparison.csv",
    log:
        "logs/phase_fine/comparison.log",
    conda:
        "../envs/gaugelab.yaml"
    params:
        size=config["phase_fine"]["figure"]["size"],
    message:
        "The fine grid's tau*: published versus reproduced"
    script:
        "../scripts/phase_fine_comparison.py"
