#!/usr/bin/env bash
# Time the default workflow end to end from nothing: a fresh clone of REV (default HEAD) in a
# temporary folder, `snakemake --cores 2` on the given target (default: everything), with any
# further arguments passed to Snakemake; then Snakemake's own CPU time (benchmarks/snakemake_cpu.py)
# and each job's own wall time from its benchmark file.
#   benchmarks/time_workflow.sh [REV] [TARGET] [SNAKEMAKE ARGS...]
#   benchmarks/time_workflow.sh HEAD all --config data='{"tinyshakespeare": {"path": "/abs/input.txt"}}'
set -euo pipefail
rev=${1:-HEAD}
target=${2:-all}
shift $(( $# < 2 ? $# : 2 ))
repo=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
work=$(mktemp -d)
git clone -q "$repo" "$work/repo"
git -C "$work/repo" checkout -q "$rev"
cd "$work/repo"
SECONDS=0
python "$repo/benchmarks/snakemake_cpu.py" --cores 2 "$target" "$@" > "$work/snakemake.log" 2>&1
echo "$(git rev-parse --short HEAD) $target: ${SECONDS} s wall (log: $work/snakemake.log)"
tail -n 1 "$work/snakemake.log"
# Where the time went: each job's own wall time and CPU time, from its Snakemake benchmark file
# (logs/benchmarks/; benchmarks/ in older revisions), then the sums per family (the first folder
# under it). On a loaded machine the CPU time is the steadier measure. A revision whose jobs
# write no benchmark file gets each job's wall time from the log instead (log_job_times.py).
bench=logs/benchmarks
[ -d "$bench" ] || bench=benchmarks
if [ -z "$(find "$bench" -mindepth 2 -name '*.tsv' 2>/dev/null | head -1)" ]; then
    python "$repo/benchmarks/log_job_times.py" "$work/snakemake.log"
    exit 0
fi
find "$bench" -mindepth 2 -name '*.tsv' | sort | while read -r f; do
    printf '  %-50s %8s s wall %8s s cpu\n' "${f#"$bench"/}" "$(tail -n 1 "$f" | cut -f 1)" "$(tail -n 1 "$f" | cut -f 10)"
done
find "$bench" -mindepth 2 -name '*.tsv' | sort | while read -r f; do
    rel=${f#"$bench"/}
    printf '%s\t%s\n' "${rel%%/*}" "$(tail -n 1 "$f" | cut -f 1,10)"
done | awk -F'\t' '{n[$1]++; s[$1]+=$2; c[$1]+=$3} END {for (k in n) printf "  family %-28s %3d jobs %9.1f s wall %9.1f s cpu\n", k, n[k], s[k], c[k]}' | sort
