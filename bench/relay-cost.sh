#!/usr/bin/env bash
# The relay's own cost per request at 0 ms: the same local node, the same data, the same fixed
# rate, reached through casslab's relay (the node's client address, 127.(x+128).y.z) and
# directly (its own address, the relay's address translated away with --translate), the two
# alternating REPS times. One node, RF 1: each request crosses the relay once each way (a
# request its coordinator forwards to another node crosses it once more each way, on the
# internode path). Prints every measurement, the medians of mean, p50 and p99 (latency from the
# intended start) each way, and the differences: what the relay adds per request.
# Usage: bench/relay-cost.sh [REPS=5] [SECONDS=20] [RATE=1000]
#   NODE_ADDR=127.0.0.58 (the node's address; the cluster under CASSLAB_HOME must be one relayed
#   node there, or none), CASSLAB=path/to/casslab (else a release build of this tree)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
REPS="${1:-5}"
SECS="${2:-20}"
RATE="${3:-1000}"
ROWS=20000
ADDR="${NODE_ADDR:-127.0.0.58}"
IFS=. read -r o1 o2 o3 o4 <<<"$ADDR"
VIA="$o1.$((o2 + 128)).$o3.$o4"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

bench_casslab
echo "starting (or finding) one relayed node at $ADDR ..." >&2
"$CASSLAB" local up --base-address "$ADDR" --relay >/dev/null

# measure via|direct -> prints "mean_ms p50_ms p99_ms" of the run phase, all operations
measure() {
  local hosts=(--hosts "$VIA:9042")
  if [ "$1" = direct ]; then
    hosts=(--hosts "$ADDR:9042" --translate "$VIA:9042=$ADDR:9042")
  fi
  "$CASSLAB" run kv -P rows=$ROWS "${hosts[@]}" --rate "$RATE" --duration "${SECS}s" --warmup 2s \
    --no-lint --no-server-metrics --store "$OUT/bench.db" >"$OUT/out" 2>"$OUT/err"
  awk '/^run at fixed rate/ {on = 1} on && $1 == "total" {print $4, $5, $7; exit}' "$OUT/out"
}

echo "loading $ROWS rows and warming the node up (not measured) ..." >&2
measure via >/dev/null
printf "%-6s %-3s %9s %9s %9s\n" path rep mean_ms p50_ms p99_ms
: >"$OUT/results"
for rep in $(seq 1 "$REPS"); do
  order=(via direct)
  [ $((rep % 2)) = 0 ] && order=(direct via)
  for path in "${order[@]}"; do
    read -r mean p50 p99 < <(measure "$path")
    printf "%-6s %-3s %9s %9s %9s\n" "$path" "$rep" "$mean" "$p50" "$p99"
    echo "$path $mean $p50 $p99 $rep" >>"$OUT/results"
  done
done

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo
echo "medians of $REPS runs each, $RATE ops/s, $SECS s (kv: 50% reads, 50% updates, one node):"
for col in 2 3 4; do
  name=$(echo "x mean p50 p99" | cut -d' ' -f"$col")
  via=$(awk -v c="$col" '$1 == "via" {print $c}' "$OUT/results" | median)
  direct=$(awk -v c="$col" '$1 == "direct" {print $c}' "$OUT/results" | median)
  awk -v n="$name" -v v="$via" -v d="$direct" 'BEGIN {printf "  %-4s through the relay %7.3f ms, direct %7.3f ms: the relay adds %+.0f µs\n", n, v, d, (v - d) * 1000}'
done
echo
echo "what the relay adds, from paired repetitions (targets: p50 at most 0.2 ms, p99 at most 0.5 ms):"
python3 - "$OUT/results" <<'PY'
import sys
sys.path.insert(0, "bench")
import paired
rows = [l.split() for l in open(sys.argv[1])]
for col, name, goal in ((2, "p50", 0.2), (3, "p99", 0.5), (1, "mean", None)):
    via = {r[4]: float(r[col]) for r in rows if r[0] == "via"}
    direct = {r[4]: float(r[col]) for r in rows if r[0] == "direct"}
    print(paired.difference_line(f"{name} through the relay − direct", [(via[k], direct[k]) for k in via if k in direct], "ms", at_most=goal))
PY
