# Published versus reproduced: every family's comparison part merged into one table, the
# numerics of the records, the report's landing page and the reproduction appendix.


rule numerics:
    input:
        records=lambda wildcards: comparison_records(),
        set_aside=checked_files("results/paper/numerics.csv"),
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
        parts=comparison_parts,
        numerics="results/paper/numerics.csv",
        set_aside=checked_files(
            "results/paper/comparison.csv", "results/paper/comparison.html", "results/paper/macros.tex"
        ),
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
        "../scripts/comparison.py"


rule report_pages:
    input:
        comparison="results/paper/comparison.csv",
        macros="results/paper/macros.tex",
        numerics="results/paper/numerics.csv",
        intro=workflow.source_path("../report/workflow.rst"),
        set_aside=checked_files("results/paper/report.rst", "results/paper/appendix.tex"),
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
        products=lambda w: [str(p) for p in default_targets() + opt_in_products()],
        not_run=opt_in_not_run,
    message:
        "The report's landing page (the verdict first) and the reproduction appendix"
    script:
        "../scripts/report_pages.py"


rule appendix:
    input:
        tex="results/paper/appendix.tex",
        products=lambda w: [str(p) for p in default_targets() if str(p).endswith((".tex", ".pdf"))],
        set_aside=checked_files("results/paper/appendix.pdf"),
    output:
        "results/paper/appendix.pdf",
    log:
        "logs/paper/appendix.log",
    conda:
        "../envs/gaugelab.yaml"
    message:
        "The reproduction appendix as a PDF (needs pdflatex)"
    script:
        "../scripts/appendix.py"
