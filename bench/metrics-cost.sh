#!/usr/bin/env bash
# What the server-metrics poll costs, on the client and on the node: casslab runs kv (50/50
# reads and updates, 100,000 rows) with its poll of the node's system_views and JVM figures on
# (the default: one poll each time an interval closes) and off (--no-server-metrics), (a) at a
# fixed RATE and (b) at maximum throughput (64 in flight), the order of on and off rotated every
# repetition. The client's CPU is user+sys of the whole casslab process (/usr/bin/time); the
# node's is the utime+stime its JVM gained during the run (/proc/PID/stat, the node found by
# `casslab local status`), both divided by the operations completed. Prints every run, then each
# ratio on/off with a 95% interval from the paired repetitions (bench/paired.py) against the
# target: at most 1.01x (the poll may cost at most 1% of either side's CPU).
#
# Usage: bench/metrics-cost.sh [REPS=6] [SECONDS=20]
# Environment:
#   RATE       the fixed rate (default 1000 ops/s)
#   UP_ARGS    options for `casslab local up` (e.g. "--base-address 127.0.0.58 --heap 1G"), CASSLAB_HOME
#   CASSLAB    the casslab binary to measure (default: a release build of this tree)
set -euo pipefail
cd "$(dirname "$0")/.."
REPS="${1:-6}"
SECS="${2:-20}"
RATE="${RATE:-1000}"
ROWS=100000
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
. bench/lib.sh
bench_casslab
NODE=""
bench_node
NODE_PID="$("$CASSLAB" local status | awk -v a="$HOST" '$2 ~ a { print $5 }' | head -1)"
[ -r "/proc/$NODE_PID/stat" ] || { echo "no running node process found for $HOST (pid '$NODE_PID')" >&2; exit 1; }
TICK="$(getconf CLK_TCK)"
echo "node: $NODE (pid $NODE_PID); rate $RATE ops/s; $REPS x $SECS s" >&2
"$CASSLAB" run kv -P rows=$ROWS -P keyspace=casslab_mcost --hosts "$HOST" --port "$PORT" --load-only \
  --no-server-metrics --no-lint --store "$OUT/bench.db" >/dev/null 2>"$OUT/err" || { tail -5 "$OUT/err" >&2; exit 1; }

node_cpu_s() { awk -v t="$TICK" '{ print ($14 + $15) / t }' "/proc/$NODE_PID/stat"; }

# measure on|off max|rate -> prints "client_cpu_s node_cpu_s ops poll_avg_ms"
measure() {
  local v="$1" mode="$2" args=() before after ops errs poll
  [ "$mode" = rate ] && args+=(--rate "$RATE")
  [ "$mode" = max ] && args+=(--concurrency 64)
  [ "$v" = off ] && args+=(--no-server-metrics)
  before="$(node_cpu_s)"
  /usr/bin/time -f "%U %S" -o "$OUT/time" "$CASSLAB" run kv -P rows=$ROWS -P keyspace=casslab_mcost --skip-load \
    --hosts "$HOST" --port "$PORT" --duration "${SECS}s" --warmup 0s "${args[@]}" --no-lint --store "$OUT/bench.db" \
    >"$OUT/out" 2>"$OUT/err"
  after="$(node_cpu_s)"
  ops=$(awk '$1=="total"{print $2}' "$OUT/out" | tail -1)
  errs=$(awk '$1=="total"{print $NF}' "$OUT/out" | tail -1)
  poll=$(grep -o "server metrics poll avg [0-9]* ms" "$OUT/out" | head -1 | awk '{print $5}' || true)  # none when off
  read -r u s < <(tail -1 "$OUT/time")
  python3 -c "print(f'{$u + $s:.2f} {$after - $before:.2f} {${ops:-0} + ${errs:-0}} ${poll:--}')"
}

printf "%-5s %-4s %-3s %9s %8s %13s %11s %8s\n" mode poll rep ops ops/s client_us/op node_us/op poll_ms
: >"$OUT/results"
for rep in $(seq 1 "$REPS"); do
  order=(on off)
  [ $((rep % 2)) = 0 ] && order=(off on)
  for mode in rate max; do
    for v in "${order[@]}"; do
      read -r ccpu ncpu ops poll < <(measure "$v" "$mode")
      if [ "$ops" -le 0 ]; then
        echo "$mode $v: no operations completed; its stderr:" >&2
        tail -5 "$OUT/err" >&2
        continue
      fi
      read -r cus nus tput < <(python3 -c "print(f'{$ccpu*1e6/$ops:.2f} {$ncpu*1e6/$ops:.2f} {$ops/$SECS:.0f}')")
      printf "%-5s %-4s %-3s %9s %8s %13s %11s %8s\n" "$mode" "$v" "$rep" "$ops" "$tput" "$cus" "$nus" "$poll"
      echo "$mode $v $rep $cus $nus $tput" >>"$OUT/results"
    done
  done
done

python3 - "$OUT/results" "$RATE" <<'PY'
import sys
sys.path.insert(0, "bench")
import paired
rows = [l.split() for l in open(sys.argv[1])]
print()
print("on/off from paired repetitions (target: at most 1.01x, the poll costing at most 1% of either side's CPU):")
for mode, label in (("rate", f"{sys.argv[2]}/s"), ("max", "max")):
    side = lambda r: r[1] if r[0] == mode else None
    for col, who in ((3, "client"), (4, "node")):
        print(paired.ratio_line(f"{label} {who} CPU/op on/off", paired.pairs_by_rep(rows, 2, col, side), at_most=1.01))
    if mode == "max":
        print(paired.ratio_line(f"{label} throughput on/off", paired.pairs_by_rep(rows, 2, 5, side), at_least=0.99))
PY
