# Reproduction workflow for "The Loss Does Not See the Basis, but Adam Does" (Singh, 2026).
#   snakemake --cores all           full default reproduction (every CPU-feasible experiment)
#   snakemake --report report.html  the report, after a run
from pathlib import Path

from snakemake.utils import min_version

min_version("9.0")


# The default configuration beside this file, wherever Snakemake runs (--directory, or this
# workflow used as a module of another, which passes its own `config:`); --configfile replaces it.
configfile: Path(workflow.current_basedir) / "config.yaml"


# Shared machinery: configuration and paths, the setting-aside of unusable records, input data.
include: "rules/common.smk"
include: "rules/records.smk"
include: "rules/data.smk"
# The paper's experiments, in its order.
include: "rules/sensing.smk"  # matrix-sensing training jobs for every sensing experiment
include: "rules/zoo.smk"  # Section 5: Table 2, Figure 1
include: "rules/controls.smk"  # Section 5's controls (App. D.1, D.2, D.4, D.7); Table 2's convex row
include: "rules/twins.smk"  # Section 6: Table 3, Figure 2, App. D.5
include: "rules/table9.smk"  # Section 6 in float64: Table 9; the `gpu` target; merging extension
include: "rules/dial.smk"  # Section 7: the Adam-p dial
include: "rules/signum_audit.smk"  # App. D.10 (opt-in: `snakemake signum_audit`): signum's audit
include: "rules/section8.smk"  # Section 8 (opt-in: `snakemake section8`): the Muon phase diagram
include: "rules/ladder.smk"  # App. D.9 (opt-in: `snakemake ladder`): Table 11, the GPU size ladder
# Beyond the paper: the equivariance diagnostic, the optimizer census (opt-in: `snakemake census`).
include: "rules/diagnose.smk"
include: "rules/census.smk"
# Published versus reproduced, merged from every family's part; the report's pages.
include: "rules/paper.smk"


# Snakemake's re-evaluation timers (a 10 s timespan, profiles/default) would hold the process open
# for up to a timespan after the last job (rules/common.smk: cancel_reevaluation_timers).
onsuccess:
    cancel_reevaluation_timers()


onerror:
    cancel_reevaluation_timers()


# The report opens with the verdict once the workflow has written it (rules/paper.smk).
report: landing_page()


rule all:
    default_target: True
    input:
        default_targets,
        opt_in_products,
