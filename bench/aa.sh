#!/usr/bin/env bash
# A/A experiments on a local node: bench/aa.yaml (two identical variants of kv at 500 ops/s,
# 3 repetitions of 10 s, 1 s windows) N times, each in a keyspace of its own so that each starts
# right after its load. Every figure marked significant and every verdict claiming a difference
# is a false one. With METHOD=new (default) the experiments run as casslab runs them (settling,
# an unmeasured round, counterbalanced order, repetitions as the unit, one family per
# comparison); METHOD=old runs them as casslab did before (interleaved, nothing before the
# measured runs, windows of all repetitions pooled, each figure judged alone); METHOD=both runs
# both. Prints one line per experiment and the totals.
# Usage: bench/aa.sh [N=10]    env: CASSLAB (binary; default: a release build), KEEP=1 (keep
#        the outputs), CASSLAB_HOME and
#        BASE_ADDRESS (the node: `casslab local up` there, left running), METHOD, RATE, RUN_SECONDS
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:-10}"
METHOD="${METHOD:-new}"
RATE="${RATE:-500}"
SECONDS_RUN="${RUN_SECONDS:-10}"
if [ -z "${CASSLAB:-}" ]; then
  echo "building casslab (release) ..." >&2
  cargo build --release -q -p casslab
  CASSLAB="$PWD/target/release/casslab"
fi
OUT="$(mktemp -d)"
if [ -n "${KEEP:-}" ]; then
  echo "outputs kept in $OUT" >&2
else
  trap 'rm -rf "$OUT"' EXIT
fi

"$CASSLAB" local up ${BASE_ADDRESS:+--base-address "$BASE_ADDRESS"} >&2

# one experiment: prints "figures-marked figures-shown verdicts-claiming disagreements"
one() {
  local method="$1" i="$2" log="$OUT/$1-$2"
  local extra=()
  if [ "$method" = old ]; then
    extra=(--order interleaved --no-unmeasured-round --no-settle --pool-windows)
  fi
  # exit 1 when a run was left out as invalid (a busy machine): the rest is still compared
  "$CASSLAB" experiment bench/aa.yaml -P "keyspace=casslab_aa_${method}_$i" --rate "$RATE" --duration "${SECONDS_RUN}s" \
    --store "$OUT/aa.db" --no-lint "${extra[@]}" >"$log.out" 2>"$log.err" || [ $? -eq 1 ]
  if grep -q '^left out of the comparison' "$log.err"; then
    echo "  ($method $i: $(grep -c '^left out of the comparison' "$log.err") invalid run(s) left out)" >&2
  fi
  # the comparison starts at its header line; the run summaries before it are not counted
  sed -n '/^windows of /,$p' "$log.out" >"$log.cmp"
  local marked shown claims odd
  marked=$(grep -cE '^    (ops/s|mean|p50|p95|p99|p99\.9|p99_typical) {2,}.* \*$' "$log.cmp" || true)
  shown=$(grep -cE '^    (ops/s|mean|p50|p95|p99|p99\.9|p99_typical) {2,}' "$log.cmp" || true)
  claims=$(grep -cE "^  b's .* (higher|lower) than a's" "$log.cmp" || true)
  odd=$(grep -c ' disagrees with the other repetitions of ' "$log.cmp" || true)
  echo "$marked $shown $claims $odd"
}

METHODS=$( [ "$METHOD" = both ] && echo old new || echo "$METHOD" )
declare -A TM TS TC TE TD
for m in $METHODS; do TM[$m]=0 TS[$m]=0 TC[$m]=0 TE[$m]=0 TD[$m]=0; done
# the methods alternate, so that both meet the same machine
for i in $(seq 1 "$N"); do
  for m in $METHODS; do
    read -r marked shown claims odd < <(one "$m" "$i")
    echo "$m $i: $marked of $shown figures marked, $claims verdicts claim a difference, $odd repetitions named as disagreeing"
    TM[$m]=$((TM[$m] + marked)); TS[$m]=$((TS[$m] + shown)); TC[$m]=$((TC[$m] + claims)); TD[$m]=$((TD[$m] + odd))
    if [ "$claims" -gt 0 ]; then TE[$m]=$((TE[$m] + 1)); fi
  done
done
for m in $METHODS; do
  echo "== $m: $N A/A experiments: ${TM[$m]} of ${TS[$m]} figures marked; ${TC[$m]} verdicts claimed a difference, in ${TE[$m]} of $N experiments; ${TD[$m]} repetitions named as disagreeing"
done
echo "the node keeps running: '$CASSLAB local down' stops it" >&2
