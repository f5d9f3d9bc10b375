#!/usr/bin/env bash
# Time the default workflow end to end from nothing: a fresh clone of REV (default HEAD) in a
# temporary folder, `snakemake --cores 2` on the given target (default: everything).
#   benchmarks/time_workflow.sh [REV] [TARGET]
set -euo pipefail
rev=${1:-HEAD}
target=${2:-all}
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
work=$(mktemp -d)
git clone -q "$repo" "$work/repo"
git -C "$work/repo" checkout -q "$rev"
cd "$work/repo"
SECONDS=0
snakemake --cores 2 "$target" > "$work/snakemake.log" 2>&1
echo "$(git rev-parse --short HEAD) $target: ${SECONDS} s wall (log: $work/snakemake.log)"
