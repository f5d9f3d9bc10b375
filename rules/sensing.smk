# Matrix-sensing training jobs, their extraction, and the sensitivity reruns.
#
# One training job = one shard of an experiment: its runs (every method, lr and seed it does not
# share with an earlier experiment, rules/common.smk: RUN_SOURCE; dealt seed by seed, dealing.deal;
# config `shards`) advance as one batch sharing the product with A
# (gaugelab.sensing.runner.run_batch), and each run writes its own record, and the record of a
# shorter run of another arm that is its first steps (RUN_PREFIX); a zoo job trains decay-full's
# runs whose first steps its runs are in their place and writes both (RUN_HOST). The grouping is a speed choice:
# under the portable numerics a run's numbers do not depend on its batch, and a change of `shards`
# retrains nothing that exists (no param names the grouping).

for _experiment in SENSING_EXPERIMENTS:
    for _shard in range(SHARDS):
        if not shard_cells(_experiment, _shard):
            continue  # every run of this shard is another experiment's (RUN_SOURCE)

        rule:
            name:
                f"{_experiment}_train_{_shard}"
            input:
                shard_checks(_experiment, _shard),
            output:
                shard_records(_experiment, _shard),
            log:
                f"logs/{_experiment}/train_shard{_shard}.log",
            benchmark:
                f"logs/benchmarks/{_experiment}/train_shard{_shard}.tsv"
            conda:
                "../envs/gaugelab.yaml"
            threads: 1
            resources:
                mem_mb=2000,
                runtime=60,
            params:  # not the shard's cells: its records (outputs) name them, and a change of grouping retrains nothing
                experiment=_experiment,
                settings=SENSING[_experiment],
                prefixes=prefix_arms(_experiment),
                hosted=hosted_arms(_experiment),
                dtype=config["dtype"],
                device=config["device"],
            message:
                f"{_experiment}: training shard {_shard + 1} of {SHARDS}, {len(shard_cells(_experiment, _shard))} runs of up to "
                f"{SENSING[_experiment]['budget']} steps as one batch{prefix_note(_experiment, _shard)}"
                f"{took('sensing_train', _experiment)}"
            script:
                "../scripts/sensing_train.py"


rule sensing_summary:
    input:
        runs=lambda w: experiment_runs(w.experiment),
        set_aside=lambda w: checked_files(f"results/{w.experiment}/summary.csv"),
    output:
        "results/{experiment}/summary.csv",
    log:
        "logs/{experiment}/summary.log",
    wildcard_constraints:
        experiment="|".join(SENSING_EXPERIMENTS),
    conda:
        "../envs/gaugelab.yaml"
    params:
        grids=lambda w: SENSING[w.experiment]["grids"],
        rule=lambda w: SENSING[w.experiment]["selection"],
        tol=lambda w: SENSING[w.experiment]["tol"],
    message:
        "{wildcards.experiment}: aggregate seeds and select learning rates"
    script:
        "../scripts/sensing_summary.py"


rule sensing_sensitivity:
    input:
        runs=lambda w: rerun_runs(w.experiment),
        shared=lambda w: shared_rerun_shards(w.experiment),
        set_aside=lambda w: checked(
            f"results/runs/{w.experiment}/sensitivity_shard{w.shard}.json",
            gaugelab_records.BUNDLE_SCHEMA,
            gaugelab_records.provenance(
                *gaugelab_sq.bundle_identity(
                    w.experiment,
                    rerun_settings(w.experiment),
                    int(w.shard),
                    SENSITIVITY_SHARDS,
                    config["seeds"],
                    config["sensitivity"]["perturbations"],
                    config["dtype"],
                )
            ),
        ),
    output:
        "results/runs/{experiment}/sensitivity_shard{shard}.json",
    log:
        "logs/{experiment}/sensitivity_shard{shard}.log",
    benchmark:
        "logs/benchmarks/{experiment}/sensitivity_shard{shard}.tsv"
    wildcard_constraints:
        experiment="|".join(RERUN_EXPERIMENTS),
    priority: 20  # ahead of the summary and figures: the comparison waits on the reruns, not on them
    conda:
        "../envs/gaugelab.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        shard=lambda w: int(w.shard),
        shards=SENSITIVITY_SHARDS,
        seeds=config["seeds"],
        settings=lambda w: rerun_settings(w.experiment),
        perturbations=config["sensitivity"]["perturbations"],
        dtype=config["dtype"],
        device=config["device"],
    message:
        f"{{wildcards.experiment}}: perturbed reruns of the cells the comparison rests on, shard {{wildcards.shard}}{took('sensing_sensitivity', bound='up to')}"
    script:
        "../scripts/sensing_sensitivity.py"


rule sensing_ensemble:
    input:
        runs=lambda w: rerun_runs(w.experiment),
        first=lambda w: rerun_shards(w.experiment),
        shared=lambda w: shared_ensembles(w.experiment),
        set_aside=lambda w: checked(
            ensemble_bundle(w.experiment, w.shard),
            gaugelab_records.BUNDLE_SCHEMA,
            gaugelab_records.provenance(
                *gaugelab_sq.bundle_identity(
                    w.experiment,
                    rerun_settings(w.experiment),
                    int(w.shard),
                    SENSITIVITY_SHARDS,
                    config["seeds"],
                    ensemble_perturbations(),
                    config["dtype"],
                    config["sensitivity"]["chaotic"],
                )
            ),
        ),
    output:
        "results/runs/{experiment}/sensitivity_ensemble_shard{shard}.json",
    log:
        "logs/{experiment}/sensitivity_ensemble_shard{shard}.log",
    benchmark:
        "logs/benchmarks/{experiment}/sensitivity_ensemble_shard{shard}.tsv"
    wildcard_constraints:
        experiment="|".join(RERUN_EXPERIMENTS),
        shard=r"\d+",
    priority: 20
    conda:
        "../envs/gaugelab.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        shard=lambda w: int(w.shard),
        shards=SENSITIVITY_SHARDS,
        seeds=config["seeds"],
        settings=lambda w: rerun_settings(w.experiment),
        perturbations=ensemble_perturbations(),
        chaotic=config["sensitivity"]["chaotic"],
        dtype=config["dtype"],
        device=config["device"],
    message:
        f"{{wildcards.experiment}}: the chaotic cells' ensemble of perturbed reruns, shard {{wildcards.shard}}{took('sensing_ensemble', bound='up to')}"
    script:
        "../scripts/sensing_ensemble.py"
