# Section 7: the Adam-p anisotropy dial. Per-seed training jobs (every variant and lr as one
# batch), S4 selection, the tuned envelope (arm A), the fixed-lr verdicts (arm B), table, figure.


rule dial_train:
    input:
        lambda w: checked_runs("dial", [(name, lr, w.seed) for name in dial_labels() for lr in config["dial"]["lrs"]]),
    output:
        [run_path("dial", name, lr, "{seed}") for name in dial_labels() for lr in config["dial"]["lrs"]],
    log:
        "logs/dial/train_seed{seed}.log",
    benchmark:
        "logs/benchmarks/dial/train_seed{seed}.tsv"
    conda:
        "../envs/gaugelab.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        seed=lambda w: int(w.seed),
        settings=config["dial"],
        dtype=config["dtype"],
        device=config["device"],
    message:
        f"Section 7 dial: every Adam-p variant and lr ({len(dial_labels()) * len(config['dial']['lrs'])} runs of up to "
        f"{config['dial']['budget']} steps as one batch), seed {{wildcards.seed}}{took('dial_train')}"
    script:
        "../scripts/dial_train.py"


rule dial_summary:
    input:
        runs=dial_runs(),
        set_aside=checked_files("results/dial/summary.csv", "results/dial/envelope.csv", "results/dial/fixed_lr.csv"),
    output:
        summary="results/dial/summary.csv",
        envelope="results/dial/envelope.csv",
        fixed_lr="results/dial/fixed_lr.csv",
    log:
        "logs/dial/summary.log",
    conda:
        "../envs/gaugelab.yaml"
    params:
        settings=config["dial"],
    message:
        "Section 7 dial: S4 selection, tuned envelope, fixed-lr verdicts"
    script:
        "../scripts/dial_summary.py"


rule dial_table:
    input:
        envelope="results/dial/envelope.csv",
        fixed_lr="results/dial/fixed_lr.csv",
        set_aside=checked_files("results/tables/dial.tex", "results/tables/dial.html"),
    output:
        tex="results/tables/dial.tex",
        html=report(
            "results/tables/dial.html",
            caption="../report/dial_table.rst",
            category="Section 7 — Adam-p dial",
            labels={"item": "dial table"},
        ),
    log:
        "logs/tables/dial.log",
    conda:
        "../envs/gaugelab.yaml"
    message:
        "Section 7 dial table"
    script:
        "../scripts/dial_table.py"


rule dial_figure:
    input:
        envelope="results/dial/envelope.csv",
        runs=dial_runs(),
        zoo_summary="results/zoo/summary.csv",
        set_aside=checked_files("results/figures/dial.pdf", "results/figures/dial.png"),
    output:
        pdf="results/figures/dial.pdf",
        png=report(
            "results/figures/dial.png",
            caption="../report/dial_figure.rst",
            category="Section 7 — Adam-p dial",
            labels={"item": "dial figure"},
        ),
    log:
        "logs/figures/dial.log",
    conda:
        "../envs/gaugelab.yaml"
    params:
        rank=config["dial"]["rank"],
    message:
        "Section 7 dial figure"
    script:
        "../scripts/dial_figure.py"


rule dial_comparison:
    input:
        envelope="results/dial/envelope.csv",
        fixed_lr="results/dial/fixed_lr.csv",
        runs=dial_runs(),
        sensitivity=sensitivity_bundles("dial"),
        set_aside=checked_files("results/dial/comparison.csv"),
    output:
        "results/dial/comparison.csv",
    log:
        "logs/dial/comparison.log",
    conda:
        "../envs/gaugelab.yaml"
    message:
        "Section 7 dial: published versus reproduced"
    script:
        "../scripts/dial_comparison.py"


rule dial:
    input:
        "results/tables/dial.tex",
        "results/tables/dial.html",
        "results/figures/dial.pdf",
        "results/figures/dial.png",
        "results/dial/comparison.csv",
    message:
        "Section 7: the Adam-p dial (table, figure, comparison)"
