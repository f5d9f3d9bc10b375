# The set_aside job: a record or intermediate table that cannot be used (rules/common.smk:
# checked) is moved out of its job's way, into results/set_aside/, and that job reruns.


rule set_aside:
    output:
        f"{SET_ASIDE}/{{record}}.{{digest}}",
    log:
        "logs/set_aside/{record}.{digest}.log",
    wildcard_constraints:
        digest=r"[0-9a-f]{12}",
    localrule: True
    conda:
        "../envs/gaugelab.yaml"
    params:
        original=lambda w: f"results/{w.record}",
        # derived from the output, so not a rerun trigger: found once, the reason is not looked for again
        reason=lambda w, output: SET_ASIDE_REASONS.get(output[0], "found unusable"),
    message:
        "set aside {params.original}: {params.reason}"
    script:
        "../scripts/set_aside.py"
