#!/usr/bin/env bash
# Recall and latency of vector search at two write shares: the built-in `vector-search` (by
# default 100,000 clustered 128-dimension vectors, cosine, an SAI vector index) loaded once on
# casslab's local node, then searched at a fixed rate with no writes and with WRITE_SHARE % of
# the operations rewriting vectors, each REPS times in rotated order. Prints every run's
# recall@10 (of the searches the judge had time for), search p50 and p99 (ms, from the intended
# start), the judge's CPU per search and the machine's load average, then the medians.
#
# Usage: bench/vector-search.sh [REPS=3] [SECONDS=60]
# Environment:
#   CASSLAB_HOME  the local cluster to use (`casslab local up $UP_ARGS` starts it when needed)
#   UP_ARGS       options for that `local up` (e.g. "--base-address 127.0.0.85 --heap 1G")
#   NODE          a running node ADDRESS:PORT instead
#   RATE          the fixed rate of the runs (default 100)
#   WRITE_SHARE   the write share of the second setting, percent (default 10)
#   PARAMS        more -P options for the workload (e.g. "-P rows=20000 -P dims=64")
#   CASSLAB       the casslab binary to measure (default: a release build of this tree)
set -euo pipefail
cd "$(dirname "$0")/.."
REPS="${1:-3}"
SECS="${2:-60}"
RATE="${RATE:-100}"
SHARE="${WRITE_SHARE:-10}"
read -r -a EXTRA <<<"${PARAMS:-}"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
echo "building casslab (release) ..." >&2
. bench/lib.sh
bench_casslab
bench_node
echo "node: $NODE" >&2
COMMON=(--hosts "$NODE" -P keyspace=casslab_bench_vectors "${EXTRA[@]}" --no-lint --store "$OUT/bench.db")
echo "loading (once) ..." >&2
"$CASSLAB" run vector-search "${COMMON[@]}" --load-only >/dev/null 2>"$OUT/err" || { tail -5 "$OUT/err" >&2; exit 1; }

# measure SHARE -> prints "recall p50_ms p99_ms judge_ms_per_search"
measure() {
  "$CASSLAB" run vector-search "${COMMON[@]}" -P "write_share=$1" --skip-load --rate "$RATE" --duration "${SECS}s" --warmup 10s \
    >"$OUT/out" 2>"$OUT/err" || { tail -5 "$OUT/err" >&2; exit 1; }
  local recall cost
  recall="$(grep -o 'search [0-9.]* \[' "$OUT/out" | head -1 | awk '{print $2}')"
  cost="$(grep -o '[0-9.]* ms of CPU a search' "$OUT/out" | head -1 | awk '{print $1}')"
  # the run phase's search row: op count ops/s mean p50 p95 p99 ...
  awk -v r="$recall" -v c="$cost" '$1=="search" && !done {print r, $5, $7, c; done=1}' "$OUT/out"
}

printf "%-6s %-3s %8s %8s %8s %10s  %s\n" writes rep recall p50_ms p99_ms judge_ms load_avg
: >"$OUT/results"
for rep in $(seq 1 "$REPS"); do
  order=(0 "$SHARE")
  [ $((rep % 2)) = 0 ] && order=("$SHARE" 0)
  for w in "${order[@]}"; do
    read -r recall p50 p99 cost < <(measure "$w")
    load="$(cut -d' ' -f1-3 /proc/loadavg)"
    printf "%-6s %-3s %8s %8s %8s %10s  %s\n" "$w%" "$rep" "$recall" "$p50" "$p99" "$cost" "$load"
    echo "$w $recall $p50 $p99" >>"$OUT/results"
  done
done

echo
echo "medians over $REPS repetitions (rate $RATE/s, ${SECS}s measured each):"
for w in 0 "$SHARE"; do
  awk -v w="$w" '$1==w' "$OUT/results" | sort -n -k2 | awk -v w="$w" '{r[NR]=$2} END {printf "  writes %s%%: recall@10 %s", w, r[int((NR+1)/2)]}'
  awk -v w="$w" '$1==w' "$OUT/results" | sort -n -k4 | awk '{p[NR]=$4} END {printf ", search p99 %s ms\n", p[int((NR+1)/2)]}'
done
