# Matrix-sensing training jobs, their extraction, and the sensitivity reruns.
#
# One training job = one seed of an experiment: every method at every lr advances as one batch
# sharing the product with A (gaugelab.runner.run_batch), and writes one record per run. A run's
# numbers do not depend on its batch, so this grouping is a speed choice only (README: Speed).

for _experiment in SENSING_EXPERIMENTS:

    rule:
        name:
            f"{_experiment}_train"
        message:
            f"{_experiment}: every method and lr, seed {{wildcards.seed}}"
        output:
            [
                run_path(_experiment, method, lr, "{seed}")
                for method, grid in config[_experiment]["grids"].items()
                for lr in grid
            ],
        log:
            f"logs/{_experiment}/train_seed{{seed}}.log",
        benchmark:
            f"benchmarks/{_experiment}/train_seed{{seed}}.tsv"
        conda:
            "../envs/gaugelab.yaml"
        threads: 1
        resources:
            mem_mb=2000,
            runtime=60,
        params:
            experiment=_experiment,
            seed=lambda w: int(w.seed),
            settings=config[_experiment],
            dtype=config["dtype"],
            device=config["device"],
        script:
            "../scripts/train_sensing.py"


rule sensing_summary:
    message:
        "{wildcards.experiment}: aggregate seeds and select learning rates"
    input:
        lambda w: experiment_runs(w.experiment),
    output:
        "results/{experiment}/summary.csv",
    log:
        "logs/{experiment}/summary.log",
    conda:
        "../envs/gaugelab.yaml"
    params:
        grids=lambda w: config[w.experiment]["grids"],
        rule=lambda w: config[w.experiment]["selection"],
        tol=lambda w: config[w.experiment]["tol"],
    script:
        "../scripts/summarize_sensing.py"


rule sensing_sensitivity:
    message:
        "{wildcards.experiment}: perturbed reruns of the cells the comparison rests on, seed {wildcards.seed}"
    input:
        lambda w: experiment_runs(w.experiment),
    output:
        "results/runs/{experiment}/sensitivity_seed{seed}.json",
    log:
        "logs/{experiment}/sensitivity_seed{seed}.log",
    benchmark:
        "benchmarks/{experiment}/sensitivity_seed{seed}.tsv"
    conda:
        "../envs/gaugelab.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        seed=lambda w: int(w.seed),
        settings=lambda w: config[w.experiment],
        rule=lambda w: config[w.experiment]["selection"],
        perturbations=config["sensitivity"]["perturbations"],
        dtype=config["dtype"],
        device=config["device"],
    script:
        "../scripts/sensitivity_sensing.py"
