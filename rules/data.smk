# Input data: the char-LM corpus (tiny-Shakespeare), verified against its sha256.
#
# A configured local copy is checked when the workflow is parsed (rules/common.smk), so a wrong
# file stops the run before any job starts. Without one the corpus is downloaded from its public origin by the first
# job to run (highest priority), and verified there; a failed download names the way out.


# On a cluster the download runs where the workflow runs: compute nodes often have no network.
localrules:
    tinyshakespeare,


_corpus = config["data"]["tinyshakespeare"]


rule tinyshakespeare:
    output:
        CORPUS,
    log:
        "logs/data/tinyshakespeare.log",
    priority: 100
    conda:
        "../envs/gaugelab.yaml"
    params:
        local=_corpus.get("path"),
        url=_corpus["url"],
        sha256=_corpus["sha256"],
    message:
        "tiny-Shakespeare: fetch and verify the char-LM corpus"
    script:
        "../scripts/tinyshakespeare.py"
