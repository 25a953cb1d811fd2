#!/usr/bin/env bash
# Client cost per operation, Redis next to CQL: casslab runs the same YCSB-A (10 fields of
# 100 bytes, zipfian keys, 50% reads, 50% one-field updates) at the same fixed rate, on this
# machine, against the local Cassandra node (`ycsb-a`) and the local redis-server
# (`ycsb-a-redis`). The two alternate, REPS times each; the figure is user+sys CPU of the whole
# casslab process (/usr/bin/time) divided by the operations it completed, so it is what the
# client spends per operation with each target (driver, engine, recording), not the server.
# Prints every measurement and the medians.
# Usage: bench/client-cost.sh [REPS=3] [SECONDS=30] [RATE=5000]
#   (CASSLAB=path/to/casslab to use a build of your own; CASSLAB_HOME picks the local servers)
set -euo pipefail
cd "$(dirname "$0")/.."
REPS="${1:-3}"
SECS="${2:-30}"
RATE="${3:-5000}"
ROWS=100000
CONC=128
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

if [ -z "${CASSLAB:-}" ]; then
  echo "building casslab (release) ..." >&2
  cargo build --release -q -p casslab
  CASSLAB="$PWD/target/release/casslab"
fi

# the servers already running (as `local up` / `local redis up` left them), else default ones
"$CASSLAB" local status >/dev/null 2>&1 || "$CASSLAB" local up >/dev/null
"$CASSLAB" local redis status >/dev/null 2>&1 || "$CASSLAB" local redis up >/dev/null

echo "loading both data sets (skipped when already loaded) ..." >&2
"$CASSLAB" run ycsb-a -P rows=$ROWS --load-only --concurrency $CONC --store "$OUT/load.db" >/dev/null
"$CASSLAB" run ycsb-a-redis -P rows=$ROWS --load-only --concurrency $CONC --store "$OUT/load.db" >/dev/null

# measure WORKLOAD -> prints "user_s sys_s ops"
measure() {
  /usr/bin/time -f "%U %S" -o "$OUT/time" "$CASSLAB" run "$1" -P rows=$ROWS --skip-load \
    --duration "${SECS}s" --warmup 0s --concurrency $CONC --rate "$RATE" --no-server-metrics --no-lint \
    --store "$OUT/bench.db" >"$OUT/out" 2>"$OUT/err"
  local ops errs
  ops=$(awk '$1=="total"{print $2}' "$OUT/out" | tail -1)
  errs=$(awk '$1=="total"{print $NF}' "$OUT/out" | tail -1)
  read -r u s < <(tail -1 "$OUT/time")
  echo "$u $s $((ops + errs))"
}

printf "%-6s %-3s %10s %10s %12s\n" target rep ops cpu_s cpu_us/op
: >"$OUT/results"
for rep in $(seq 1 "$REPS"); do
  for target in cql redis; do
    if [ "$target" = cql ]; then w=ycsb-a; else w=ycsb-a-redis; fi
    read -r u s ops < <(measure "$w")
    us=$(python3 -c "print(f'{($u+$s)*1e6/max($ops,1):.2f}')")
    printf "%-6s %-3s %10s %10s %12s\n" "$target" "$rep" "$ops" "$(python3 -c "print(f'{$u+$s:.2f}')")" "$us"
    echo "$target $us $ops" >>"$OUT/results"
  done
done

python3 - "$OUT/results" "$SECS" "$RATE" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
secs, rate = float(sys.argv[2]), float(sys.argv[3])
def med(t, col):
    return statistics.median(float(r[col]) for r in rows if r[0] == t)
c, r = med("cql", 1), med("redis", 1)
print()
print(f"medians at a fixed {rate:,.0f} ops/s (whole-process user+sys CPU / completed operations):")
print(f"  CQL (ycsb-a)         {c:7.2f} us/op ({med('cql', 2)/secs:,.0f} ops/s)")
print(f"  Redis (ycsb-a-redis) {r:7.2f} us/op ({med('redis', 2)/secs:,.0f} ops/s)   ratio redis/cql {r/c:.2f}x")
PY
