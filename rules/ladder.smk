# App. D.9, Table 11 (opt-in: `snakemake ladder`): the GPU problem-size ladder (sensing.md §14).
# float64 on config ladder/device, the GPU loop, k = n, m rounded (gaugelab.sensing.gpu). Per (arm,
# method): S5 over the grid on the selection seeds, then the extension seeds at lr*, and where the
# arm asks the cosine-all reruns; then Table 11 with each arm's split, and the comparison's rows.
# Its optional GPU dial arm (§14.6, config dial_gpu) runs beside it and writes a table of its own.

LADDER_TABLES = [
    "results/ladder/table11.csv",
    "results/ladder/splits.csv",
    "results/tables/table11.tex",
    "results/tables/table11.html",
]
DIAL_GPU_TABLES = [
    "results/dial_gpu/table.csv",
    "results/tables/dial_gpu.tex",
    "results/tables/dial_gpu.html",
]


# The training job of every GPU-protocol arm: the ladder's and its dial arm's, and the phase
# diagram's fine grid (rules/section8.smk), each family in its own folder of results/runs.
rule gpu_sensing_train:
    input:
        unpack(gpu_arm_inputs),
    output:
        "results/runs/{family}/{arm}/{method}/{stage}.json",
    log:
        "logs/{family}/{arm}/{method}/{stage}.log",
    benchmark:
        "logs/benchmarks/{family}/{arm}/{method}/{stage}.tsv"
    wildcard_constraints:
        family="|".join(GPU_ARMS),
        arm="|".join(arm for arms in GPU_ARMS.values() for arm in arms) or "no_arm",
        stage="|".join(gaugelab_ladder.STAGES),
        method=r"[a-z0-9_.]+",  # the dial arm's variants: p1, rms_p0.75, ...
    conda:
        "../envs/gaugelab.yaml"
    threads: 1
    resources:
        gpu=1,
        mem_mb=16000,
        runtime=360,
    params:
        settings=lambda w: GPU_ARMS[w.family][w.arm],
        device=lambda w: config[w.family]["device"],
    message:
        "{wildcards.family}: {wildcards.arm}, {wildcards.method}, {wildcards.stage} runs as one float64 batch"
    script:
        "../scripts/gpu_sensing_train.py"


rule ladder_table:
    input:
        bundles=[gpu_bundle(*key) for key in gpu_keys("ladder")],
        set_aside=checked_files(*LADDER_TABLES),
    output:
        table=LADDER_TABLES[0],
        splits=LADDER_TABLES[1],
        tex=LADDER_TABLES[2],
        html=report(
            LADDER_TABLES[3],
            caption="../report/table11.rst",
            category="App. D.9 — GPU problem-size ladder",
            labels={"item": "Table 11"},
        ),
    log:
        "logs/ladder/table11.log",
    conda:
        "../envs/gaugelab.yaml"
    params:
        stages=[key[1:] for key in gpu_keys("ladder")],
        arms=LADDER,
    message:
        "Table 11: lr*, rec at lr* over every seed, the cosine-all rec and each arm's split"
    script:
        "../scripts/ladder_table.py"


rule ladder_comparison:
    input:
        table=LADDER_TABLES[0],
        splits=LADDER_TABLES[1],
        set_aside=checked_files("results/ladder/comparison.csv"),
    output:
        "results/ladder/comparison.csv",
    log:
        "logs/ladder/comparison.log",
    conda:
        "../envs/gaugelab.yaml"
    message:
        "Table 11: the paper's qualitative statements checked"
    script:
        "../scripts/ladder_comparison.py"


# The optional GPU dial arm (sensing.md §14.6): its variants' bundles, trained by gpu_sensing_train
# (family dial_gpu), read into one table per (size, p). The paper publishes no values for it.
rule dial_gpu_table:
    input:
        bundles=[gpu_bundle(*key) for key in gpu_keys("dial_gpu")],
        set_aside=checked_files(*DIAL_GPU_TABLES),
    output:
        table=DIAL_GPU_TABLES[0],
        tex=DIAL_GPU_TABLES[1],
        html=report(
            DIAL_GPU_TABLES[2],
            caption="../report/dial_gpu_table.rst",
            category="App. D.9 — GPU problem-size ladder",
            labels={"item": "GPU dial arm"},
        ),
    log:
        "logs/dial_gpu/table.log",
    conda:
        "../envs/gaugelab.yaml"
    params:
        stages=[key[1:3] for key in gpu_keys("dial_gpu")],
        arms=DIAL_GPU,
    message:
        "App. D.9 GPU dial arm: lr* by S5 over every seed, rec, erank and steps per (size, p)"
    script:
        "../scripts/dial_gpu_table.py"


# The target: Table 11 and its comparison rows, and the dial arm's table where it has sizes. Once
# they exist, the default target merges the rows into results/paper/comparison.csv and the tables
# into the report.
rule ladder:
    input:
        rules.ladder_table.output,
        rules.ladder_comparison.output,
        rules.dial_gpu_table.output if DIAL_GPU else [],
