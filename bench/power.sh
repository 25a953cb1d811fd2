#!/usr/bin/env bash
# What an experiment can see, on a real node with a change of known size: variants a and b of kv
# at a fixed rate, every request through a delaying relay (examples/delay_relay.rs) that adds
# nothing to a's runs and a set delay to b's (each run sets its own with an `exec` event at its
# start), the delay a share of the read p50 measured through the relay after a 30 s warm-up
# (EFFECTS, in percent; 0 is an A/A experiment). The node settles further during an experiment, so
# each line also prints a's read p50 in the experiment's own runs and the change the delay made of
# it (realized), beside the change the experiment measured. Each experiment runs at casslab's
# default design (sequential: blocks until every judged figure is within the precision or found,
# or the budget is spent) and judges JUDGE. Prints, per change: what each experiment concluded
# about read p50 and how long it took; then the spread per block the experiments measured, and a
# simulation calibrated on it (examples/power_sim.rs) that gives power, false claims and minutes
# per design over many experiments. The relay's own lateness (how far after its due time it wrote)
# is printed too.
# Usage: bench/power.sh            env: REPS (experiments per change, 1), EFFECTS ("0 5 10 20"),
#        RATE (1000), BUDGET (10m), PRECISION (default), JUDGE (read.p50,read.mean),
#        DURATION/WARMUP (run length; default: casslab's), BASE (the node, 127.0.0.201),
#        RELAY (127.0.0.202), RUNS (simulated experiments per line, 1000), KEEP=1
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
REPS="${REPS:-1}"
EFFECTS="${EFFECTS:-0 5 10 20}"
RATE="${RATE:-1000}"
BUDGET="${BUDGET:-10m}"
JUDGE="${JUDGE:-read.p50,read.mean}"
BASE="${BASE:-127.0.0.201}"
RELAY="${RELAY:-127.0.0.202}"
RUNS="${RUNS:-1000}"
bench_casslab
cargo build --release -q -p casslab --example delay_relay
cargo build --release -q -p casslab-core --example power_sim
OUT="$(mktemp -d)"
if [ -n "${KEEP:-}" ]; then echo "outputs kept in $OUT" >&2; else trap 'kill $RELAY_PID 2>/dev/null || true; rm -rf "$OUT"' EXIT; fi
export CASSLAB_HOME="${CASSLAB_HOME:-$PWD/target/bench-power-home}"
"$CASSLAB" local up --base-address "$BASE" --heap 1G >&2
CONTROL="$OUT/delay_us"; STATS="$OUT/relay-stats"
echo 0 >"$CONTROL"
target/release/examples/delay_relay "$RELAY:9042" "$BASE:9042" "$CONTROL" "$STATS" 2>"$OUT/relay.log" &
RELAY_PID=$!
if [ -z "${KEEP:-}" ]; then trap 'kill $RELAY_PID 2>/dev/null || true; rm -rf "$OUT"' EXIT; else trap 'kill $RELAY_PID 2>/dev/null || true' EXIT; fi
sleep 1
THROUGH=(--hosts "$RELAY" --translate "$BASE:9042=$RELAY:9042")
STORE="$OUT/power.db"

# the read p50 through the relay with no delay: what the changes are a share of
"$CASSLAB" run kv -P keyspace=casslab_power --rate "$RATE" --duration 30s --warmup 30s "${THROUGH[@]}" --store "$STORE" --no-lint >"$OUT/pilot.out" 2>"$OUT/pilot.err"
P50_MS=$(awk '$1 == "read" && $2 ~ /^[0-9]+$/ { print $5; exit }' "$OUT/pilot.out")
echo "read p50 through the relay at no delay: $P50_MS ms ($RATE ops/s)"

experiment_file() { # $1 = delay of b in microseconds
  cat <<EOF
name: power
workload: kv
load: shared
window: 1s
rate: $RATE
judge: [${JUDGE}]
params: { rows: 20000, keyspace: casslab_power }
variants:
  a:
    events: ["0s exec echo 0 > $CONTROL"]
  b:
    events: ["0s exec echo $1 > $CONTROL"]
EOF
}

printf '\n%-8s %-5s %-9s %-9s %-9s %-11s %-26s %s\n' "change" "rep" "delay" "a's p50" "realized" "read p50" "measured [interval]" "minutes"
SDS=""; BLOCK_S=""
for effect in $EFFECTS; do
  delay_us=$(awk -v p="$P50_MS" -v e="$effect" 'BEGIN { printf "%d", p * 1000 * e / 100 }')
  for rep in $(seq 1 "$REPS"); do
    experiment_file "$delay_us" >"$OUT/power-$effect.yaml"
    start=$(date +%s)
    args=(--budget "$BUDGET" --store "$STORE" --no-lint --allow-invalid)
    [ -n "${PRECISION:-}" ] && args+=(--precision "$PRECISION")
    [ -n "${DURATION:-}" ] && args+=(--duration "$DURATION")
    [ -n "${WARMUP:-}" ] && args+=(--warmup "$WARMUP")
    "$CASSLAB" experiment "$OUT/power-$effect.yaml" "${THROUGH[@]}" "${args[@]}" >"$OUT/exp-$effect-$rep.out" 2>"$OUT/exp-$effect-$rep.err" || true
    minutes=$(awk -v s="$start" -v e="$(date +%s)" 'BEGIN { printf "%.1f", (e - s) / 60 }')
    # the change the delay really made is a share of a's read p50 in the experiment's own runs
    a_p50=""; measured=""
    read -r a_p50 measured < <(awk '/^  read$/ { r = 1 } r && $1 == "p50" { a = $2; if ($NF == "*") NF--; print a, $(NF - 2), $(NF - 1), $NF; exit }' "$OUT/exp-$effect-$rep.out") || true
    realized=$(awk -v d="$delay_us" -v p="${a_p50:-0}" 'BEGIN { if (p > 0) printf "+%.1f%%", d / 10 / p; else print "?" }')
    if grep -q -m1 "^  b's read p50 is" "$OUT/exp-$effect-$rep.out"; then verdict=found; else verdict="not found"; fi
    printf '%-8s %-5s %-9s %-9s %-9s %-11s %-26s %s\n' "+$effect%" "$rep" "${delay_us}us" "${a_p50:-?} ms" "$realized" "$verdict" "${measured:-(see $OUT)}" "$minutes"
    grep -m1 '^  stopped after' "$OUT/exp-$effect-$rep.out" | sed 's/^/           /' || true
  done
done
awk '/^late_ns_total/ { l = $2 } /^chunks/ { c = $2 } END { if (c > 0) printf "\nrelay: %d chunks, written on average %.1f us after they were due\n", c, l / c / 1000 }' "$STATS"

# the spread per block of the judged figures, from the last experiment, and the simulation
"$CASSLAB" experiment "$OUT/power-0.yaml" "${THROUGH[@]}" --plan --budget "$BUDGET" --store "$STORE" --no-lint >"$OUT/plan.out" 2>"$OUT/plan.err" || true
cat "$OUT/plan.out"
SDS=$(awk '/^  b: / { gsub("%", "", $4); printf "%s%.4f", (n++ ? "," : ""), $4 / 100 }' "$OUT/plan.out")
NAMES=$(awk '/^  b: / { printf "%s%s.%s", (n++ ? "," : ""), $2, $3 }' "$OUT/plan.out")
BLOCK_S=$(sed -n 's/.*\(pilot of\|from\) [0-9]* \(measured \)\{0,1\}blocks, \([0-9.]*\) s a block.*/\3/p' "$OUT/plan.out")
BUDGET_S=$(awk -v b="$BUDGET" 'BEGIN { n = b + 0; u = substr(b, length(n "") + 1); print (u == "m" ? n * 60 : (u == "h" ? n * 3600 : n)) }')
if [ -n "$SDS" ] && [ -n "$BLOCK_S" ]; then
  echo
  echo "simulated (spread per block from the real runs: $SDS; $BLOCK_S s a block):"
  target/release/examples/power_sim --sd "$SDS" --names "$NAMES" --block-s "$BLOCK_S" --budget-s "$BUDGET_S" --runs "$RUNS" --effects "0,0.05,0.10,0.20" ${PRECISION:+--precision $(awk -v p="$PRECISION" 'BEGIN { print (p + 0) / 100 }')}
fi
