# Section 6 and Appendix D.5: attention-head gauge twins on the CPU float32 model. One job per
# copy 1 (optimizer × init seed) and up to three pairs that share it, the summary, Table 3 and its
# QK companion, the D.5 table, Figure 2 and the published-versus-reproduced rows.

# What determines a run; the run sets and the D.5 threshold do not, so editing them reruns nothing.
TWIN_SETTINGS = gaugelab_twins.job_settings(config["twins"])
# The distinct pairs of every run set, grouped by the copy 1 they share (optimizer × init seed),
# at most three to a job: Adam's init-42 copy has six twins, and as one job of seven runs it was the
# longest job of the default target (docs/speed.md); in two parts its copy 1 is trained twice.
TWIN_BASES = gaugelab_pairs.by_base(gaugelab_twin_summary.unique_pairs(gaugelab_twin_summary.sets_of(config["twins"])))
TWIN_JOBS = gaugelab_pairs.in_parts(TWIN_BASES, 3)


# One job per copy 1 and its part of the pairs: it trains that copy once, beside copy 2 of each of
# them, as one batched program (twins.train_base; each record is the one its pair gets alone), and
# writes one record per pair. A pair's record that cannot be used reruns its job (rules/common.smk).
for job, pairs in TWIN_JOBS.items():
    optimizer, init = gaugelab_pairs.one_base(pairs)
    part = job.removeprefix(f"{optimizer}_")  # init42, or init42_part0 for a part

    rule:
        name:
            f"twins_run_{job}"
        input:
            [
                marker
                for pair in pairs
                for marker in checked(
                    twin_run_path(pair),
                    gaugelab_records.TWIN_SCHEMA,
                    gaugelab_twins.provenance(pair, TWIN_SETTINGS),
                )
            ],
        output:
            [twin_run_path(pair) for pair in pairs],
        log:
            f"logs/twins/{optimizer}/{part}.log",
        benchmark:
            f"logs/benchmarks/twins/{optimizer}/{part}.tsv"
        priority: longest_first("twins_run", job)
        conda:
            "../envs/gaugelab.yaml"
        threads: 1
        resources:
            mem_mb=2000,
            runtime=60,
        params:
            settings=TWIN_SETTINGS,
            pairs=[p.row for p in pairs],
        message:
            f"Section 6 twins: the {optimizer} copy of init {init} and {len(pairs)} of its twins{took('twins_run', job)}"
        script:
            "../scripts/twins_run.py"


rule twins_summary:
    input:
        runs=twin_runs(),
        set_aside=checked_files("results/twins/pairs.csv", "results/twins/d5.csv"),
    output:
        summary="results/twins/pairs.csv",
        d5="results/twins/d5.csv",
    log:
        "logs/twins/summary.log",
    conda:
        "../envs/gaugelab.yaml"
    params:
        sets=config["twins"]["sets"],
        tau=config["twins"]["tau_decades"],
    message:
        "Section 6 twins: one summary row per pair, and the Appendix D.5 quantities"
    script:
        "../scripts/twins_summary.py"


rule table3:
    input:
        "results/twins/pairs.csv",
        set_aside=checked_files(
            "results/tables/table3.tex",
            "results/tables/table3.html",
            "results/tables/table3_qk.tex",
            "results/tables/table3_qk.html",
        ),
    output:
        tex="results/tables/table3.tex",
        html=report(
            "results/tables/table3.html",
            caption="../report/table3.rst",
            category="Section 6: attention twins",
            labels={"item": "Table 3"},
        ),
        qk_tex="results/tables/table3_qk.tex",
        qk_html=report(
            "results/tables/table3_qk.html",
            caption="../report/table3_qk.rst",
            category="Section 6: attention twins",
            labels={"item": "Table 3, QK drift"},
        ),
    log:
        "logs/tables/table3.log",
    conda:
        "../envs/gaugelab.yaml"
    message:
        "Table 3: drift between twins (and QK drift) at the checkpoints"
    script:
        "../scripts/table3.py"


rule table_d5:
    input:
        "results/twins/d5.csv",
        set_aside=checked_files("results/tables/d5.tex", "results/tables/d5.html"),
    output:
        tex="results/tables/d5.tex",
        html=report(
            "results/tables/d5.html",
            caption="../report/d5.rst",
            category="Section 6: attention twins",
            labels={"item": "Appendix D.5"},
        ),
    log:
        "logs/tables/d5.log",
    conda:
        "../envs/gaugelab.yaml"
    message:
        "Appendix D.5: the multi-seed twin summary"
    script:
        "../scripts/table_d5.py"


rule figure2:
    input:
        "results/twins/pairs.csv",
        set_aside=checked_files("results/figures/figure2.pdf", "results/figures/figure2.png"),
    output:
        pdf="results/figures/figure2.pdf",
        png=report(
            "results/figures/figure2.png",
            caption="../report/figure2.rst",
            category="Section 6: attention twins",
            labels={"item": "Figure 2"},
        ),
    log:
        "logs/figures/figure2.log",
    conda:
        "../envs/gaugelab.yaml"
    message:
        "Figure 2: attention gauge drift"
    script:
        "../scripts/figure2.py"


rule twins_comparison:
    input:
        "results/twins/pairs.csv",
        set_aside=checked_files("results/twins/comparison.csv"),
    output:
        "results/twins/comparison.csv",
    log:
        "logs/twins/comparison.log",
    conda:
        "../envs/gaugelab.yaml"
    params:
        sets=config["twins"]["sets"],
    message:
        "Section 6 and Appendix D.5: published versus reproduced"
    script:
        "../scripts/twins_comparison.py"


rule twins:
    input:
        rules.table3.output,
        rules.table_d5.output,
        rules.figure2.output,
        "results/twins/comparison.csv",
    message:
        "Section 6 and Appendix D.5: Table 3, Figure 2, the D.5 table and their comparison"
