#!/usr/bin/env bash
# find-max with and without a ramp first: the same workload, SLA and step length searched
# twice, once by fixed rates only and once with `--ramp-first`; prints, for each, the wall-clock
# time to the answer, the runs it took and the answer. Usage:
#
#   bench/findmax-ramp.sh [SLA='p99 < 10ms'] [STEP=8s] [MAX_STEPS=6]
#
# CASSLAB (a casslab binary; default: a release build of this tree), NODE (ADDRESS:PORT; default:
# the node `casslab local up $UP_ARGS` starts), ROWS (default 20000), ORDER ("plain ramp" or
# "ramp plain": which search runs first).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

SLA="${1:-p99 < 10ms}"
STEP="${2:-8s}"
MAX_STEPS="${3:-6}"
ROWS="${ROWS:-20000}"
bench_casslab
bench_node
STORE="$(mktemp -d)/findmax.db"

search() { # $1: plain|ramp
  local extra=()
  [ "$1" = ramp ] && extra=(--ramp-first)
  local t0 t1 out
  t0=$(date +%s.%N)
  out="$("$CASSLAB" run kv --hosts "$HOST:$PORT" --no-lint -P "rows=$ROWS" --warmup 2s --duration "$STEP" \
    --find-max "$SLA" --max-steps "$MAX_STEPS" "${extra[@]}" --store "$STORE" 2>/dev/null)"
  t1=$(date +%s.%N)
  local answer runs
  answer="$(grep -o 'highest rate meeting the SLA: [0-9]* ops/s' <<<"$out" | grep -o '[0-9]* ops/s' || echo none)"
  # the steps' rows (probe included), and the ramp's run
  runs="$(sed -n '/^find-max:/,$p' <<<"$out" | grep -cE '^ +[0-9]+ +(max|[0-9]+) ' || true)"
  grep -q '^  ramp (run' <<<"$out" && runs=$((runs + 1))
  printf '%-6s %5.0f s  %2d runs  answer %s\n' "$1" "$(echo "$t1 - $t0" | bc)" "$runs" "$answer"
  echo "$out" | sed -n '/^find-max:/,$p' | sed 's/^/         /'
}

echo "find-max '$SLA', steps of $STEP (after a 2 s warm-up), at most $MAX_STEPS steps, $ROWS rows, node $HOST:$PORT"
for mode in ${ORDER:-plain ramp}; do
  search "$mode"
done
