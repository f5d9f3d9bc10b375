# The optimizer census (docs/audit.md): every optimizer of torch.optim and of
# pytorch-optimizer through the twin triplet at its library defaults, on the sensing testbed and
# one real model (its symmetries found by gaugelab.tools.audit), and the table of verdicts. Opt-in:
# `snakemake census --cores 2` (one job per library); not part of the default target.

from gaugelab.tools import census as gaugelab_census


include: "checks/census.smk"


# Census: one library's optimizers, one JSON record
rule census_library:
    input:
        census_checked,
    output:
        "results/census/{library}.json",
    log:
        "logs/census/{library}.log",
    benchmark:
        "logs/benchmarks/census/{library}.tsv"
    wildcard_constraints:
        library="|".join(gaugelab_census.LIBRARIES),
    conda:
        "../envs/audit.yaml"
    threads: 1
    resources:
        mem_mb=3000,
        runtime=60,
    params:
        steps=config["census"]["steps"],
        dtype=config["census"]["dtype"],
        model=config["census"]["model"],
    message:
        f"Optimizer census: every optimizer of {{wildcards.library}} on sensing and {config['census']['model']}"
    script:
        "../scripts/census_library.py"


# Census: the table of verdicts (CSV, LaTeX, HTML for the report)
rule census_table:
    input:
        runs=expand("results/census/{library}.json", library=config["census"]["libraries"]),
        set_aside=checked_files("results/census/census.csv", "results/tables/census.tex", "results/tables/census.html"),
    output:
        summary="results/census/census.csv",
        tex="results/tables/census.tex",
        html=report(
            "results/tables/census.html",
            caption="../report/census_table.rst",
            category="Equivariance diagnostic",
            labels={"item": "optimizer census"},
        ),
    log:
        "logs/tables/census.log",
    conda:
        "../envs/audit.yaml"
    message:
        "Optimizer census: the table of verdicts"
    script:
        "../scripts/census_table.py"


rule census:
    input:
        rules.census_table.output,
    message:
        "Optimizer census (table)"
