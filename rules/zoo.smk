# Section 5: the optimizer zoo on matrix sensing (sensing.md; the per-seed training jobs and the
# summary are rules/sensing.smk's). Table 2 (LaTeX for the paper, HTML for the report), Figure 1
# (vector PDF and a PNG twin shown inline in the report) and their published-versus-reproduced part.
# Every cell comes from the run records.


rule table2:
    input:
        summary="results/zoo/summary.csv",
        comparison="results/zoo/comparison.csv",
        set_aside=checked_files("results/tables/table2.tex", "results/tables/table2.html"),
    output:
        tex="results/tables/table2.tex",
        html=report(
            "results/tables/table2.html",
            caption="../report/table2.rst",
            category="Section 5 — optimizer zoo",
            labels={"item": "Table 2"},
        ),
    log:
        "logs/tables/table2.log",
    conda:
        "../envs/gaugelab.yaml"
    message:
        "Table 2: the optimizer zoo"
    script:
        "../scripts/table2.py"


rule figure1:
    input:
        summary="results/zoo/summary.csv",
        runs=experiment_runs("zoo"),
        set_aside=checked_files("results/figures/figure1.pdf", "results/figures/figure1.png"),
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
        tol=config["zoo"]["tol"],
    message:
        "Figure 1: the zoo map"
    script:
        "../scripts/figure1.py"


rule zoo_comparison:
    input:
        summary="results/zoo/summary.csv",
        runs=experiment_runs("zoo"),
        sensitivity=sensitivity_bundles("zoo"),
        set_aside=checked_files("results/zoo/comparison.csv"),
    output:
        "results/zoo/comparison.csv",
    log:
        "logs/zoo/comparison.log",
    conda:
        "../envs/gaugelab.yaml"
    message:
        "Table 2: published versus reproduced"
    script:
        "../scripts/zoo_comparison.py"


rule zoo:
    input:
        "results/tables/table2.tex",
        "results/tables/table2.html",
        "results/figures/figure1.pdf",
        "results/figures/figure1.png",
        "results/zoo/comparison.csv",
    message:
        "Section 5: Table 2, Figure 1 and their comparison"
