#!/usr/bin/env bash
# The smoke configuration's records, tables and figures, before and after a change: run the
# default target of tests/config/smoke.yaml in fresh clones of OLD and NEW (default: HEAD), then
# compare the two results trees (compare_records.py: byte for byte, a record's timing aside).
# Exits 1 if any file differs.
#   benchmarks/same_outputs.sh OLD [NEW]
set -euo pipefail
old=$1
new=${2:-HEAD}
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
work=$(mktemp -d)
for rev in "$old" "$new"; do
    git clone -q "$repo" "$work/$rev"
    git -C "$work/$rev" checkout -q "$rev"
    # the smoke configuration of the newer tree, so both runs are of the same settings
    (cd "$work/$rev" && snakemake --cores 2 --configfile "$repo/tests/config/smoke.yaml" > "$work/$rev.log" 2>&1) \
        || { echo "$rev: the smoke run failed (log: $work/$rev.log)"; exit 2; }
done
echo "$old vs $new (smoke configuration; runs in $work):"
python "$repo/benchmarks/compare_records.py" "$work/$old" "$work/$new"
