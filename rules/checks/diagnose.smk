# The diagnostic's records checked before use (rules/common.smk: checked); only functions here,
# beside rules/diagnose.smk, since Snakemake's lint keeps functions and rules in separate files.


def diagnose_checked(wildcards):
    """The set-aside inputs of the diagnosis files (rules/common.smk: checked)."""
    s = config["diagnose"]
    return [
        marker
        for label, item in DIAGNOSE_PLAN.items()
        for marker in checked(
            f"results/diagnose/runs/{label}.json",
            gaugelab_records.DIAGNOSE_SCHEMA,
            gaugelab_diagnose.provenance(
                item["source"],
                item["testbeds"],
                steps=s["steps"],
                lr=item["lr"],
                dtype=s["dtype"],
                options=item["options"],
                sizes={name: s[name] for name in item["testbeds"]},
            ),
        )
    ]
