# Tables: LaTeX for the paper, HTML for the report. Every cell comes from the run records.


rule table2:
    input:
        summary="results/zoo/summary.csv",
        comparison="results/zoo/comparison.csv",
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
