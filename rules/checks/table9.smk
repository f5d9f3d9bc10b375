# Table 9's records checked before use (rules/common.smk: checked) and the full-length records
# already on disk; only functions here, beside rules/table9.smk, since Snakemake's lint keeps
# functions and rules in separate files.


def t9_full_provenance(model, pair):
    return gaugelab_float64.provenance(model, pair, T9_SETTINGS, T9["steps"][model])


def t9_full_checked(pairs):
    """The set-aside inputs of one full-length job: its pairs' records (rules/common.smk: checked)."""
    return lambda w: [
        marker
        for pair in pairs
        for marker in checked(
            gaugelab_float64.full_run_path(w.model, pair),
            gaugelab_records.TWIN_SCHEMA,
            t9_full_provenance(w.model, pair),
        )
    ]


def t9_existing(wildcards):
    """The full-length records already on disk that can be used (Table 9 is built from whatever
    exists: rerun the default target after the `gpu` target to fold them in)."""
    return [
        gaugelab_float64.full_run_path(model, pair)
        for model in T9["configs"]
        for pair in T9_PAIRS
        if usable(
            gaugelab_float64.full_run_path(model, pair), gaugelab_records.TWIN_SCHEMA, t9_full_provenance(model, pair)
        )
    ]


def t9_unusable(wildcards):
    """Full-length records on disk that cannot be used (e.g. a short run where a full one belongs)
    are set aside before Table 9 is built; their pairs count as not run."""
    return [
        marker
        for model in T9["configs"]
        for pair in T9_PAIRS
        for marker in checked(
            gaugelab_float64.full_run_path(model, pair), gaugelab_records.TWIN_SCHEMA, t9_full_provenance(model, pair)
        )
    ]


def t9_step1_checked(wildcards):
    provenance = gaugelab_float64.step1_provenance(wildcards.model, T9_SETTINGS, T9_PAIRS)
    return checked(gaugelab_float64.step1_path(wildcards.model), gaugelab_records.TWIN_BUNDLE_SCHEMA, provenance)


def t9_twins(init):
    """One pair per distinct twin of an init seed among Table 9's pairs: what its step-0 job measures."""
    return gaugelab_float64_step1.twins_of(T9_PAIRS, int(init))


def t9_step0_checked(wildcards):
    provenance = gaugelab_float64_step1.step0_provenance(wildcards.model, wildcards.init, T9["dtype"])
    return checked(
        gaugelab_float64.step0_path(wildcards.model, wildcards.init), gaugelab_records.TWIN_STEP0_SCHEMA, provenance
    )


def t9_step1_part_checked(wildcards):
    pairs = T9_COPY1[(wildcards.optimizer, int(wildcards.init))]
    provenance = gaugelab_float64.step1_provenance(wildcards.model, T9_SETTINGS, pairs)
    path = gaugelab_float64.step1_part_path(wildcards.model, wildcards.optimizer, wildcards.init)
    return checked(path, gaugelab_records.TWIN_BUNDLE_SCHEMA, provenance)
