#!/usr/bin/env bash
# What an experiment can see, under both designs, on one real node with a change of known size.
# Two kv variants at a fixed rate, each through a delaying relay of its own
# (examples/delay_relay.rs): a's adds nothing, b's adds a delay that is a share of the read p50
# measured through a's relay after a 30 s warm-up (EFFECTS, in percent; 0 is an A/A experiment).
# Each change runs one experiment per design and repetition, in the same invocation, on the same
# node, the designs' order rotated from one repetition (and change) to the next:
#   blocks        one variant after the other, counterbalanced blocks (a b, b a, ...)
#   simultaneous  both variants in the same seconds of every block (each at the full rate,
#                 each through its own relay: the node takes both at once)
# Both run casslab's default sequential design otherwise (blocks until every judged figure is
# within the precision or found, or the budget is spent) and judge JUDGE. Each line prints a's
# read p50 in the experiment's own runs and the change the delay really made of it (realized:
# b's delay plus how much later than due b's relay wrote its chunks during that experiment than
# a's did, as a share of a's p50), beside what the experiment measured and how long it took. Then, per design, the spread per block of
# its last experiment (its plan) and a simulation calibrated on it (examples/power_sim.rs):
# power, false claims and minutes per change over many experiments. The relays' own lateness
# (how far after its due time each wrote) is printed too.
# Usage: bench/power.sh            env: REPS (experiments per change and design, 1),
#        EFFECTS ("0 5 10 20"), RATE (1000), BUDGET (10m), PRECISION (default),
#        JUDGE (read.p50,read.mean), DESIGNS ("blocks simultaneous"), DURATION/WARMUP (run
#        length; default: casslab's), BASE (the node, 127.0.0.201), RELAY_A (127.0.0.202),
#        RELAY_B (127.0.0.203), RUNS (simulated experiments per line, 1000), KEEP=1
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
REPS="${REPS:-1}"
EFFECTS="${EFFECTS:-0 5 10 20}"
RATE="${RATE:-1000}"
BUDGET="${BUDGET:-10m}"
JUDGE="${JUDGE:-read.p50,read.mean}"
DESIGNS="${DESIGNS:-blocks simultaneous}"
BASE="${BASE:-127.0.0.201}"
RELAY_A="${RELAY_A:-127.0.0.202}"
RELAY_B="${RELAY_B:-127.0.0.203}"
RUNS="${RUNS:-1000}"
bench_casslab
cargo build --release -q -p casslab --example delay_relay
cargo build --release -q -p casslab-core --example power_sim
OUT="$(mktemp -d)"
export CASSLAB_HOME="${CASSLAB_HOME:-$PWD/target/bench-power-home}"
"$CASSLAB" local up --base-address "$BASE" --heap 1G >&2
PIDS=()
relay() { # $1 = name, $2 = listen address
  echo 0 >"$OUT/delay_$1"
  target/release/examples/delay_relay "$2:9042" "$BASE:9042" "$OUT/delay_$1" "$OUT/stats_$1" 2>"$OUT/relay_$1.log" &
  PIDS+=($!)
}
relay a "$RELAY_A"
relay b "$RELAY_B"
cleanup() {
  kill "${PIDS[@]}" 2>/dev/null || true
  if [ -z "${KEEP:-}" ]; then rm -rf "$OUT"; else echo "outputs kept in $OUT" >&2; fi
}
trap cleanup EXIT
sleep 1
through() { echo --hosts "$1" --translate "$BASE:9042=$1:9042"; }
# a relay's cumulative counts (its stats file, rewritten every second): "chunks late_ns"
relay_stat() { awk '/^chunks/ { c = $2 } /^late_ns_total/ { l = $2 } END { print (c + 0), (l + 0) }' "$OUT/stats_$1" 2>/dev/null || echo "0 0"; }
# the mean lateness in microseconds of the chunks written between two relay_stat readings
late_between() { awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " "); c = y[1] - x[1]; printf "%.1f", (c > 0 ? (y[2] - x[2]) / c / 1000 : 0) }'; }
STORE="$OUT/power.db"

# the read p50 through a relay with no delay: what the changes are a share of
# shellcheck disable=SC2046
"$CASSLAB" run kv -P keyspace=casslab_power --rate "$RATE" --duration 30s --warmup 30s $(through "$RELAY_A") --store "$STORE" --no-lint >"$OUT/pilot.out" 2>"$OUT/pilot.err"
P50_MS=$(awk '$1 == "read" && $2 ~ /^[0-9]+$/ { print $5; exit }' "$OUT/pilot.out")
echo "read p50 through a relay at no delay: $P50_MS ms ($RATE ops/s)"

experiment_file() { # $1 = design
  cat <<EOF
name: power-$1
workload: kv
design: $1
load: shared
window: 1s
rate: $RATE
judge: [${JUDGE}]
params: { rows: 20000, keyspace: casslab_power }
variants:
  a:
    hosts: ["$RELAY_A"]
    translate: { "$BASE:9042": "$RELAY_A:9042" }
  b:
    hosts: ["$RELAY_B"]
    translate: { "$BASE:9042": "$RELAY_B:9042" }
EOF
}

read -r -a designs <<<"$DESIGNS"
printf '\n%-13s %-8s %-4s %-9s %-9s %-9s %-11s %-26s %s\n' "design" "change" "rep" "delay" "a's p50" "realized" "read p50" "measured [interval]" "minutes"
turn=0
for effect in $EFFECTS; do
  delay_us=$(awk -v p="$P50_MS" -v e="$effect" 'BEGIN { printf "%d", p * 1000 * e / 100 }')
  echo "$delay_us" >"$OUT/delay_b"
  sleep 0.1
  for rep in $(seq 1 "$REPS"); do
    # the designs take turns at going first
    n=${#designs[@]}
    order=()
    for k in $(seq 0 $((n - 1))); do order+=("${designs[$(((k + turn) % n))]}"); done
    turn=$((turn + 1))
    for design in "${order[@]}"; do
      experiment_file "$design" >"$OUT/power-$design.yaml"
      start=$(date +%s)
      args=(--budget "$BUDGET" --store "$STORE" --no-lint --allow-invalid)
      [ -n "${PRECISION:-}" ] && args+=(--precision "$PRECISION")
      [ -n "${DURATION:-}" ] && args+=(--duration "$DURATION")
      [ -n "${WARMUP:-}" ] && args+=(--warmup "$WARMUP")
      log="$OUT/exp-$design-$effect-$rep"
      before_a=$(relay_stat a); before_b=$(relay_stat b)
      # shellcheck disable=SC2046
      "$CASSLAB" experiment "$OUT/power-$design.yaml" $(through "$RELAY_A") "${args[@]}" >"$log.out" 2>"$log.err" || true
      minutes=$(awk -v s="$start" -v e="$(date +%s)" 'BEGIN { printf "%.1f", (e - s) / 60 }')
      # the change the delay really made is a share of a's read p50 in the experiment's own runs
      a_p50=""; measured=""
      read -r a_p50 measured < <(awk '/^  read$/ { r = 1 } r && $1 == "p50" { a = $2; if ($NF == "*") NF--; print a, $(NF - 2), $(NF - 1), $NF; exit }' "$log.out") || true
      # the delay b's relay really added beyond a's: its delay, plus how much later than due b's
      # relay wrote its chunks during this experiment than a's did (each relay's own lateness)
      sleep 1.1
      late_a=$(late_between "$before_a" "$(relay_stat a)"); late_b=$(late_between "$before_b" "$(relay_stat b)")
      realized=$(awk -v d="$delay_us" -v la="$late_a" -v lb="$late_b" -v p="${a_p50:-0}" 'BEGIN { if (p > 0) printf "%+.1f%%", (d + lb - la) / 10 / p; else print "?" }')
      echo "late_us a=$late_a b=$late_b" >>"$log.out"
      if grep -q -m1 "^  b's read p50 is" "$log.out"; then verdict=found; else verdict="not found"; fi
      printf '%-13s %-8s %-4s %-9s %-9s %-9s %-11s %-26s %s\n' "$design" "+$effect%" "$rep" "${delay_us}us" "${a_p50:-?} ms" "$realized" "$verdict" "${measured:-(see $log.out)}" "$minutes"
      grep -m1 '^  stopped after' "$log.out" | sed 's/^/              /' || true
    done
  done
done
for r in a b; do
  awk -v r="$r" '/^late_ns_total/ { l = $2 } /^chunks/ { c = $2 } END { if (c > 0) printf "relay %s: %d chunks, written on average %.1f us after they were due\n", r, c, l / c / 1000 }' "$OUT/stats_$r"
done

# per design: the spread per block of the judged figures, from its last experiment, and the
# simulation calibrated on it
BUDGET_S=$(awk -v b="$BUDGET" 'BEGIN { n = b + 0; u = substr(b, length(n "") + 1); print (u == "m" ? n * 60 : (u == "h" ? n * 3600 : n)) }')
for design in "${designs[@]}"; do
  # shellcheck disable=SC2046
  "$CASSLAB" experiment "$OUT/power-$design.yaml" $(through "$RELAY_A") --plan --budget "$BUDGET" --store "$STORE" --no-lint >"$OUT/plan-$design.out" 2>"$OUT/plan-$design.err" || true
  echo
  echo "== $design"
  cat "$OUT/plan-$design.out"
  SDS=$(awk '/^  b: / { gsub("%", "", $4); printf "%s%.4f", (n++ ? "," : ""), $4 / 100 }' "$OUT/plan-$design.out")
  NAMES=$(awk '/^  b: / { printf "%s%s.%s", (n++ ? "," : ""), $2, $3 }' "$OUT/plan-$design.out")
  BLOCK_S=$(sed -n 's/.*\(pilot of\|from\) [0-9]* \(measured \)\{0,1\}blocks, \([0-9.]*\) s a block.*/\3/p' "$OUT/plan-$design.out")
  if [ -n "$SDS" ] && [ -n "$BLOCK_S" ]; then
    together=no
    [ "$design" = simultaneous ] && together=yes
    echo
    echo "simulated, $design (spread per block from the real runs: $SDS; $BLOCK_S s a block):"
    target/release/examples/power_sim --sd "$SDS" --names "$NAMES" --block-s "$BLOCK_S" --budget-s "$BUDGET_S" --runs "$RUNS" --effects "0,0.05,0.10,0.20" --simultaneous "$together" ${PRECISION:+--precision $(awk -v p="$PRECISION" 'BEGIN { print (p + 0) / 100 }')}
  fi
done
