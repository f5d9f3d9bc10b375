# The census's records checked before use (rules/common.smk: checked); only functions here,
# beside rules/census.smk, since Snakemake's lint keeps functions and rules in separate files.


def census_checked(wildcards):
    """The set-aside inputs of a library's census file (rules/common.smk: checked)."""
    settings = {k: v for k, v in config["census"].items() if k != "libraries"}
    return checked(
        f"results/census/{wildcards.library}.json",
        gaugelab_records.CENSUS_SCHEMA,
        gaugelab_records.provenance({"library": wildcards.library}, {**settings, "names": None}),
    )
