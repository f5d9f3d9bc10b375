# Published versus reproduced: one comparison part per experiment, merged into one table.

COMPARISON_PARTS.append("results/zoo/comparison.csv")


rule zoo_comparison:
    input:
        summary="results/zoo/summary.csv",
        runs=experiment_runs("zoo"),
        sensitivity=sensitivity_bundles("zoo"),
        set_aside=checked_tables("results/zoo/comparison.csv"),
    output:
        "results/zoo/comparison.csv",
    log:
        "logs/zoo/comparison.log",
    conda:
        "../envs/gaugelab.yaml"
    message:
        "Table 2: published versus reproduced"
    script:
        "../scripts/compare_zoo.py"


rule numerics:
    input:
        records=lambda wildcards: comparison_records(),
        set_aside=checked_tables("results/paper/numerics.csv"),
    output:
        "results/paper/numerics.csv",
    log:
        "logs/paper/numerics.log",
    conda:
        "../envs/gaugelab.yaml"
    message:
        "Which machines and numerics mode made the records"
    script:
        "../scripts/numerics.py"


rule comparison:
    input:
        parts=lambda wildcards: COMPARISON_PARTS,
        numerics="results/paper/numerics.csv",
        set_aside=checked_tables("results/paper/comparison.csv"),
    output:
        csv="results/paper/comparison.csv",
        html=report(
            "results/paper/comparison.html",
            caption="../report/comparison.rst",
            category="Published vs reproduced",
            labels={"item": "comparison"},
        ),
        macros="results/paper/macros.tex",
    log:
        "logs/paper/comparison.log",
    conda:
        "../envs/gaugelab.yaml"
    message:
        "Every published number beside the reproduced one"
    script:
        "../scripts/merge_comparison.py"


rule report_pages:
    input:
        comparison="results/paper/comparison.csv",
        macros="results/paper/macros.tex",
        intro=workflow.source_path("../report/workflow.rst"),
    output:
        landing="results/paper/report.rst",
        appendix=report(
            "results/paper/appendix.tex",
            caption="../report/appendix.rst",
            category="Published vs reproduced",
            labels={"item": "reproduction appendix (LaTeX)"},
        ),
    log:
        "logs/paper/report_pages.log",
    conda:
        "../envs/gaugelab.yaml"
    params:
        products=lambda w: [str(p) for p in DEFAULT_TARGETS],
    message:
        "The report's landing page (the verdict first) and the reproduction appendix"
    script:
        "../scripts/report_pages.py"


rule appendix:
    input:
        tex="results/paper/appendix.tex",
        products=lambda w: [str(p) for p in DEFAULT_TARGETS if str(p).endswith((".tex", ".pdf"))],
    output:
        "results/paper/appendix.pdf",
    log:
        "logs/paper/appendix.log",
    conda:
        "../envs/gaugelab.yaml"
    message:
        "The reproduction appendix as a PDF (needs pdflatex)"
    script:
        "../scripts/appendix_pdf.py"


rule zoo:
    input:
        "results/tables/table2.tex",
        "results/tables/table2.html",
        "results/figures/figure1.pdf",
        "results/figures/figure1.png",
        "results/zoo/comparison.csv",
    message:
        "Section 5: Table 2, Figure 1 and their comparison"


DEFAULT_TARGETS.extend(rules.zoo.input)
DEFAULT_TARGETS.extend(rules.comparison.output)  # every family's rows, merged
DEFAULT_TARGETS.extend(rules.report_pages.output)
