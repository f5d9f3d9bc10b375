# Matrix-sensing training jobs, their extraction, and the sensitivity reruns.
#
# One training job = one method on one seed's instance, every lr of its grid advancing as one
# batch (gaugelab.sensing.train); it still writes one record per run.

for _experiment in SENSING_EXPERIMENTS:
    for _method, _grid in config[_experiment]["grids"].items():

        rule:
            name:
                f"{_experiment}_train_{_method}"
            message:
                f"{_experiment}: {_method} at lr {_grid}, seed {{wildcards.seed}}"
            output:
                [run_path(_experiment, _method, lr, "{seed}") for lr in _grid],
            log:
                f"logs/{_experiment}/train_{_method}_seed{{seed}}.log",
            benchmark:
                f"benchmarks/{_experiment}/train_{_method}_seed{{seed}}.tsv"
            conda:
                "../envs/gaugelab.yaml"
            threads: 1
            resources:
                mem_mb=1000,
                runtime=60,
            params:
                experiment=_experiment,
                method=_method,
                lrs=_grid,
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
        "{wildcards.experiment}: {wildcards.method} seed {wildcards.seed}, perturbed reruns"
    input:
        # the method's own records (every seed): a rerun elsewhere leaves these jobs alone
        lambda w: [p for s in config["seeds"] for p in method_runs(w.experiment, w.method, s)],
    output:
        "results/runs/{experiment}/{method}/sensitivity_seed{seed}.json",
    log:
        "logs/{experiment}/sensitivity_{method}_seed{seed}.log",
    benchmark:
        "benchmarks/{experiment}/sensitivity_{method}_seed{seed}.tsv"
    conda:
        "../envs/gaugelab.yaml"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=60,
    params:
        seed=lambda w: int(w.seed),
        settings=lambda w: config[w.experiment],
        grid=lambda w: config[w.experiment]["grids"][w.method],
        rule=lambda w: config[w.experiment]["selection"],
        perturbations=config["sensitivity"]["perturbations"],
        dtype=config["dtype"],
        device=config["device"],
    script:
        "../scripts/sensitivity_sensing.py"
