# The equivariance diagnostic (Section 6's twin triplet as a tool): every optimizer of the engine's
# registry and PyTorch's built-ins through the gauge, A = I and noise twins, a verdict per testbed,
# a drift figure per diagnosis and the table "which optimizers respect the gauge".

from gaugelab.tools import diagnose as gaugelab_diagnose


include: "checks/diagnose.smk"


DIAGNOSE_PLAN = gaugelab_diagnose.plan(config["diagnose"])


DIAGNOSE_FIGURES = [
    f"results/diagnose/figures/{label}.{testbed}.{ext}"
    for label, item in DIAGNOSE_PLAN.items()
    for testbed in item["testbeds"]
    for ext in ("pdf", "png")
]


rule diagnose_runs:
    input:
        diagnose_checked,
    output:
        [f"results/diagnose/runs/{label}.json" for label in DIAGNOSE_PLAN],
    log:
        "logs/diagnose/runs.log",
    benchmark:
        "logs/benchmarks/diagnose/runs.tsv"
    conda:
        "../envs/gaugelab.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=30,
    params:
        plan=DIAGNOSE_PLAN,
        settings=config["diagnose"],
    message:
        "Equivariance diagnostic: {} optimizers on {}, {} steps each{}".format(
            len(DIAGNOSE_PLAN),
            ", ".join(config["diagnose"]["testbeds"]),
            config["diagnose"]["steps"],
            took("diagnose_runs"),
        )
    script:
        "../scripts/diagnose_runs.py"


rule diagnose_figures:
    input:
        runs=rules.diagnose_runs.output,
        set_aside=checked_files(*DIAGNOSE_FIGURES),
    output:
        [
            (
                report(
                    path,
                    caption="../report/diagnose_figure.rst",
                    category="Equivariance diagnostic",
                    subcategory="drift figures",
                    labels={"figure": Path(path).stem},
                )
                if path.endswith(".png")
                else path
            )
            for path in DIAGNOSE_FIGURES
        ],
    log:
        "logs/diagnose/figures.log",
    conda:
        "../envs/gaugelab.yaml"
    message:
        "Equivariance diagnostic: drift of the three twins, one figure per diagnosis"
    script:
        "../scripts/diagnose_figures.py"


rule diagnose_table:
    input:
        runs=rules.diagnose_runs.output,
        set_aside=checked_files(
            "results/diagnose/verdicts.csv", "results/tables/diagnose.tex", "results/tables/diagnose.html"
        ),
    output:
        summary="results/diagnose/verdicts.csv",
        tex="results/tables/diagnose.tex",
        html=report(
            "results/tables/diagnose.html",
            caption="../report/diagnose_table.rst",
            category="Equivariance diagnostic",
            labels={"item": "which optimizers respect the gauge"},
        ),
    log:
        "logs/tables/diagnose.log",
    conda:
        "../envs/gaugelab.yaml"
    message:
        "Equivariance diagnostic: which optimizers respect the gauge"
    script:
        "../scripts/diagnose_table.py"


rule diagnose:
    input:
        "results/diagnose/verdicts.csv",
        "results/tables/diagnose.tex",
        "results/tables/diagnose.html",
        DIAGNOSE_FIGURES,
    message:
        "Equivariance diagnostic (table and figures)"
