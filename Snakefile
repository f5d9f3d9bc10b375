# Reproduction workflow for "The Loss Does Not See the Basis, but Adam Does" (Singh, 2026).
#   snakemake --cores all           full default reproduction (every CPU-feasible experiment)
#   snakemake --report report.html  the report, after a run
from pathlib import Path

from snakemake.utils import min_version

min_version("9.0")


# The default configuration beside this file, wherever Snakemake runs (--directory, or this
# workflow used as a module of another, which passes its own `config:`); --configfile replaces it.
configfile: Path(workflow.current_basedir) / "config.yaml"


include: "rules/common.smk"
include: "rules/records.smk"
include: "rules/data.smk"
include: "rules/sensing.smk"
include: "rules/tables.smk"
include: "rules/figures.smk"
include: "rules/paper.smk"
include: "rules/dial.smk"
include: "rules/twins.smk"  # Section 6, Appendix D.5
include: "rules/diagnose.smk"
include: "rules/census.smk"  # opt-in: `snakemake census`
include: "rules/controls.smk"  # Section 5 controls, App. D; Table 2 reference row
include: "rules/table9.smk"  # Table 9: float64 twins; the `gpu` target; merging extension


# The report opens with the verdict once the workflow has written it (rules/paper.smk).
report: landing_page()


rule all:
    default_target: True
    input:
        DEFAULT_TARGETS,
