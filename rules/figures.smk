# Figures: vector PDF for the paper and a PNG twin shown inline in the report.


rule figure1:
    input:
        summary="results/zoo/summary.csv",
        runs=experiment_runs("zoo"),
    output:
        pdf="results/figures/figure1.pdf",
        png=report(
            "results/figures/figure1.png",
            caption="../report/figure1.rst",
            category="Section 5 — optimizer zoo",
            labels={"item": "Figure 1"},
        ),
    log:
        "logs/figures/figure1.log",
    conda:
        "../envs/gaugelab.yaml"
    params:
        strict=config["zoo"]["strict"],
        grids=config["zoo"]["grids"],
        tol=config["zoo"]["tol"],
        rule=config["zoo"]["selection"],
    message:
        "Figure 1: the zoo map"
    script:
        "../scripts/figure1.py"
