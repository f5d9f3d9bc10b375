# App. D.10 (opt-in: `snakemake signum_audit`): signum's audit (sensing.md §12). P2's and P3's arms
# are ordinary sensing experiments (rules/sensing.smk trains them); P1's diagnostics are one job;
# here the tables and the row beside Table 2's signum, read against Table 2's cell's ensemble.

AUDIT_ARMS = gaugelab_signum_audit.arm_keys(config)  # (T, anneal, tau or None) -> sensing experiment
AUDIT_TABLES = [
    "results/signum_audit/horizon.csv",
    "results/tables/signum_audit.tex",
    "results/tables/signum_audit.html",
]
AUDIT_DIAGNOSTICS = [
    "results/signum_audit/diagnostics.csv",
    "results/tables/signum_diagnostics.tex",
    "results/tables/signum_diagnostics.html",
]


rule signum_audit_diagnostics:
    input:
        set_aside=checked_files(*AUDIT_DIAGNOSTICS),
    output:
        csv=AUDIT_DIAGNOSTICS[0],
        tex=AUDIT_DIAGNOSTICS[1],
        html=report(
            AUDIT_DIAGNOSTICS[2],
            caption="../report/signum_diagnostics.rst",
            category="App. D.10 — signum audit",
            labels={"item": "P1 mechanism diagnostics"},
        ),
    log:
        "logs/signum_audit/diagnostics.log",
    benchmark:
        "logs/benchmarks/signum_audit/diagnostics.tsv"
    conda:
        "../envs/gaugelab.yaml"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=60,
    params:
        config={key: config[key] for key in ("zoo", "signum_audit", "seeds")},
        dtype=config["dtype"],
        device=config["device"],
    message:
        f"App. D.10 P1: signum's diagnostics every {config['signum_audit']['diagnose_every']} steps over "
        f"{config['signum_audit']['long_budget']} steps, one run per seed"
    script:
        "../scripts/signum_audit_diagnostics.py"


rule signum_audit_tables:
    input:
        summaries=[f"results/{arm}/summary.csv" for arm in AUDIT_ARMS.values()],
        runs=[path for arm in AUDIT_ARMS.values() for path in experiment_runs(arm)],
        set_aside=checked_files(*AUDIT_TABLES),
    output:
        csv=AUDIT_TABLES[0],
        tex=AUDIT_TABLES[1],
        html=report(
            AUDIT_TABLES[2],
            caption="../report/signum_audit.rst",
            category="App. D.10 — signum audit",
            labels={"item": "P2 horizon x schedule, P3 spectral tail"},
        ),
    log:
        "logs/signum_audit/tables.log",
    conda:
        "../envs/gaugelab.yaml"
    params:
        config={key: config[key] for key in ("zoo", "signum_audit", "seeds")},
        arms=list(AUDIT_ARMS.values()),
        runs={arm: experiment_runs(arm) for arm in AUDIT_ARMS.values()},
    message:
        "App. D.10 P2 and P3: signum's rec per horizon, anneal and tail amplitude"
    script:
        "../scripts/signum_audit_tables.py"


rule signum_audit_comparison:
    input:
        table=AUDIT_TABLES[0],
        zoo_summary="results/zoo/summary.csv",
        zoo_runs=experiment_runs("zoo"),
        zoo_sensitivity=sensitivity_bundles("zoo"),
        set_aside=checked_files("results/signum_audit/comparison.csv"),
    output:
        "results/signum_audit/comparison.csv",
    log:
        "logs/signum_audit/comparison.log",
    conda:
        "../envs/gaugelab.yaml"
    params:
        budget=config["zoo"]["budget"],
    message:
        "App. D.10: the audit's Table 2 cell beside Table 2's"
    script:
        "../scripts/signum_audit_comparison.py"


# The target: its tables and its comparison row. Once they exist, the default target merges the
# row into results/paper/comparison.csv and the tables into the report.
rule signum_audit:
    input:
        rules.signum_audit_diagnostics.output,
        rules.signum_audit_tables.output,
        rules.signum_audit_comparison.output,
