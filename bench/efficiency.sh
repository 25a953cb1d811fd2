#!/usr/bin/env bash
# Throughput and client CPU per operation of casslab beside its peers — the bare scylla driver
# (../shared/bench/driver-floor, the reference) and latte (installed from crates.io into
# target/bench-tools, once) — on the same key-value 50/50 read/update mix (8-byte blob keys,
# 100-byte blob values, 200k rows, 128 in flight) against one Cassandra node, (a) at maximum
# throughput and (b) at a fixed 5,000 ops/s. Every client runs in this one invocation, REPS
# times; the order of the clients is rotated every repetition (the node and the machine warm
# up, compact and flush as a run goes, so whoever always ran first would be favoured). The
# CPU figure is user+sys of the whole process (/usr/bin/time) divided by the operations it
# completed; throughput is those operations over SECONDS. Prints every measurement, then the
# medians and the ratios of casslab to each peer, then each ratio with a 95% interval from the
# paired repetitions (bench/paired.py) and what it shows against the targets (against the bare
# driver: throughput at max ≥ 1.0×, CPU/op at max ≤ 0.85×, CPU/op at 5,000/s ≤ 0.9×).
#
# Usage: bench/efficiency.sh [REPS=3] [SECONDS=30]
# Environment:
#   CASSLAB_OTHER  more casslab binaries to measure in the same rotation, separated by spaces,
#                  each PATH or NAME=PATH (e.g. CASSLAB_OTHER="before=/tmp/old/casslab")
#   CASSLAB_ARGS   extra options for every casslab run (e.g. "--no-server-metrics")
#   NODE           ADDRESS:PORT of the node to use; else `casslab local up $UP_ARGS` (CASSLAB_HOME)
#   UP_ARGS        options for that `local up` (e.g. "--base-address 127.0.0.58 --heap 1G")
#   TOOLS          the clients to run (default "floor latte casslab", others appended)
set -euo pipefail
cd "$(dirname "$0")/.."
REPS="${1:-3}"
SECS="${2:-30}"
ROWS=200000
CONC=128
RATE=5000
FLOOR_SRC="${FLOOR_SRC:-../shared/bench/driver-floor}"
FLOOR_TARGET="$PWD/target/driver-floor"
TOOLS_ROOT="$PWD/target/bench-tools"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
export LATTE_LOG_DIR="$OUT"   # latte writes a log file per invocation, by default where it runs

echo "building casslab and the driver-floor reference (release) ..." >&2
cargo build --release -q -p casslab
CARGO_TARGET_DIR="$FLOOR_TARGET" cargo build --release -q --manifest-path "$FLOOR_SRC/Cargo.toml"
CASSLAB="$PWD/target/release/casslab"
FLOOR="$FLOOR_TARGET/release/baseline"
LATTE="$TOOLS_ROOT/bin/latte"
TOOL_LIST=(${TOOLS:-floor latte casslab})
WITH_LATTE=0
[[ " ${TOOL_LIST[*]} " == *" latte "* ]] && WITH_LATTE=1
if [ "$WITH_LATTE" = 1 ]; then
  if [ ! -x "$LATTE" ]; then
    echo "installing latte from crates.io into $TOOLS_ROOT (once) ..." >&2
    cargo install -q latte-cli --root "$TOOLS_ROOT"
  fi
  echo "latte: $("$LATTE" --version 2>/dev/null | head -1)" >&2
fi

# the casslab binaries: ours, then the others by name
declare -A BIN=([casslab]="$CASSLAB")
n=0
for spec in ${CASSLAB_OTHER:-}; do
  n=$((n + 1))
  case "$spec" in
    *=*) name="${spec%%=*}"; path="${spec#*=}" ;;
    *) name="other$n"; path="$spec" ;;
  esac
  [ -x "$path" ] || { echo "CASSLAB_OTHER: $path is not an executable" >&2; exit 2; }
  BIN[$name]="$path"
  TOOL_LIST+=("$name")
  echo "$name: $path" >&2
done
read -r -a EXTRA <<<"${CASSLAB_ARGS:-}"

. bench/lib.sh
bench_node
echo "node: $NODE" >&2

echo "loading the data sets (casslab's is skipped when already loaded) ..." >&2
"$CASSLAB" run kv -P rows=$ROWS --hosts "$HOST" --port "$PORT" --load-only --concurrency $CONC --store "$OUT/load.db" >/dev/null
NODE="$NODE" "$FLOOR" load $ROWS $CONC >/dev/null 2>&1   # idempotent upserts of the same rows
if [ "$WITH_LATTE" = 1 ]; then
  "$LATTE" schema bench/kv.rn "$NODE" >/dev/null 2>&1
  "$LATTE" load -q bench/kv.rn -P rows=$ROWS "$NODE" >/dev/null 2>&1
fi

# measure TOOL MODE -> prints "user_s sys_s ops"
measure() {
  local tool="$1" mode="$2" rate_args=() floor_rate=0 ops errs
  if [ "$mode" = rate ]; then rate_args=(--rate $RATE); floor_rate=$RATE; fi
  case "$tool" in
    floor)
      /usr/bin/time -f "%U %S" -o "$OUT/time" env NODE="$NODE" "$FLOOR" run $ROWS "$SECS" $CONC $floor_rate >"$OUT/out" 2>"$OUT/err"
      ops=$(sed -n 's/^RUN .* ops=\([0-9]*\) .*/\1/p' "$OUT/out")
      ;;
    latte)
      rm -f "$OUT/latte.json"
      /usr/bin/time -f "%U %S" -o "$OUT/time" "$LATTE" run -q bench/kv.rn -P rows=$ROWS -f read:0.5 -f update:0.5 \
        --duration "${SECS}s" --concurrency $CONC --threads 1 "${rate_args[@]}" -o "$OUT/latte.json" "$NODE" >"$OUT/out" 2>"$OUT/err"
      ops=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['result']; print(r['cycle_count'])" "$OUT/latte.json")
      ;;
    *)
      /usr/bin/time -f "%U %S" -o "$OUT/time" "${BIN[$tool]}" run kv -P rows=$ROWS --skip-load --hosts "$HOST" --port "$PORT" \
        --duration "${SECS}s" --warmup 0s --concurrency $CONC "${rate_args[@]}" "${EXTRA[@]}" --store "$OUT/bench.db" >"$OUT/out" 2>"$OUT/err"
      ops=$(awk '$1=="total"{print $2}' "$OUT/out" | tail -1)
      errs=$(awk '$1=="total"{print $NF}' "$OUT/out" | tail -1)
      ops=$((ops + errs))
      ;;
  esac
  read -r u s < <(tail -1 "$OUT/time")
  echo "$u $s ${ops:-0}"
}

printf "%-10s %-5s %-3s %10s %10s %10s %10s\n" client mode rep ops ops/s cpu_s cpu_us/op
: >"$OUT/results"
count=${#TOOL_LIST[@]}
for rep in $(seq 1 "$REPS"); do
  # rotate: repetition r starts with the r-th client
  order=()
  for i in $(seq 0 $((count - 1))); do order+=("${TOOL_LIST[$(((i + rep - 1) % count))]}"); done
  for mode in max rate; do
    for tool in "${order[@]}"; do
      read -r u s ops < <(measure "$tool" "$mode")
      if [ "$ops" -le 0 ]; then
        echo "$tool $mode: no operations completed; its stderr:" >&2
        tail -5 "$OUT/err" >&2
        continue
      fi
      read -r cpu us tput < <(python3 -c "c=$u+$s; print(f'{c:.2f} {c*1e6/$ops:.2f} {$ops/$SECS:.0f}')")
      printf "%-10s %-5s %-3s %10s %10s %10s %10s\n" "$tool" "$mode" "$rep" "$ops" "$tput" "$cpu" "$us"
      echo "$tool $mode $us $tput $rep" >>"$OUT/results"
    done
  done
done

python3 - "$OUT/results" "${TOOL_LIST[@]}" <<'PY'
import statistics, sys
sys.path.insert(0, "bench")
import paired
rows = [l.split() for l in open(sys.argv[1])]
tools = sys.argv[2:]
def med(tool, mode, col):
    v = [float(r[col]) for r in rows if r[0] == tool and r[1] == mode]
    return statistics.median(v) if v else float("nan")
print()
print("medians (throughput: completed operations / seconds; CPU: whole-process user+sys / completed operations)")
print(f"{'client':<10} {'ops/s at max':>13} {'us/op at max':>13} {'us/op at 5,000/s':>17} {'ops/s at 5,000/s':>17}")
for t in tools:
    print(f"{t:<10} {med(t,'max',3):>13,.0f} {med(t,'max',2):>13.2f} {med(t,'rate',2):>17.2f} {med(t,'rate',3):>17,.0f}")
print()
print("ratios (>1: more throughput, or more CPU per operation, than the peer)")
peers = [p for p in ("floor", "latte") if p in tools]
for t in [t for t in tools if t not in ("floor", "latte")]:
    for p in peers:
        print(f"  {t} / {p:<6} throughput at max {med(t,'max',3)/med(p,'max',3):.3f}x   "
              f"CPU/op at max {med(t,'max',2)/med(p,'max',2):.3f}x   CPU/op at 5,000/s {med(t,'rate',2)/med(p,'rate',2):.3f}x")
print()
print("ratios from paired repetitions (each repetition ran every client once per mode, next to each other):")
def pairs(t, p, mode, col):
    a = {r[4]: float(r[col]) for r in rows if r[0] == t and r[1] == mode}
    b = {r[4]: float(r[col]) for r in rows if r[0] == p and r[1] == mode}
    return [(a[k], b[k]) for k in a if k in b]
targets = {"floor": {"tput": 1.0, "cpu_max": 0.85, "cpu_rate": 0.9}}
for t in [t for t in tools if t not in ("floor", "latte")]:
    for p in peers:
        goal = targets.get(p, {})
        print(paired.ratio_line(f"{t}/{p} throughput at max", pairs(t, p, "max", 3), at_least=goal.get("tput")))
        print(paired.ratio_line(f"{t}/{p} CPU/op at max", pairs(t, p, "max", 2), at_most=goal.get("cpu_max")))
        print(paired.ratio_line(f"{t}/{p} CPU/op at 5,000/s", pairs(t, p, "rate", 2), at_most=goal.get("cpu_rate")))
PY
