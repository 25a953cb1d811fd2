#!/usr/bin/env bash
# Loaders merged: the same key-value mix (kv, 50/50 read/update, 200k rows) at maximum
# throughput with 128 requests in flight in all, from 1, 2 and 4 loader processes on this
# machine (`--shard I/N`, a barrier through the node, then `casslab merge`). Prints, per loader
# count, the merged throughput and p99 and each loader's client CPU. On one machine the node is
# the bottleneck: the point is that merging is exact and what the extra loaders cost shows.
# The order of the loader counts is rotated every repetition (what runs first after the load
# is slower here). Usage: bench/scaling.sh [REPS=2] [SECONDS=20]
set -euo pipefail
cd "$(dirname "$0")/.."
REPS="${1:-2}"
SECS="${2:-20}"
ROWS=200000
INFLIGHT=128
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

echo "building casslab (release) ..." >&2
cargo build --release -q -p casslab
CASSLAB="$PWD/target/release/casslab"
NODE="$("$CASSLAB" local up | tail -1 | cut -d, -f1)"
echo "node: $NODE; loading $ROWS rows once ..." >&2
"$CASSLAB" run kv -P rows=$ROWS --load-only --hosts "$NODE" --store "$OUT/load.db" >/dev/null 2>&1

# run_with N REP -> prints "N ops_per_s p99_ms cpu_per_loader..."
run_with() {
  local n="$1" rep="$2" id="scale-$1-$2-$$" pids=()
  for i in $(seq 0 $((n - 1))); do
    "$CASSLAB" run kv -P rows=$ROWS --skip-load --hosts "$NODE" --no-lint --shard "$i/$n" --run-id "$id" \
      --duration "${SECS}s" --warmup 5s --concurrency $((INFLIGHT / n)) \
      --store "$OUT/$id-$i.db" --json "$OUT/$id/$i.json" >"$OUT/$id-$i.out" 2>"$OUT/$id-$i.err" &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  "$CASSLAB" merge "$OUT/$id" --store "$OUT/merged.db" >"$OUT/$id.merged" 2>/dev/null
  python3 - "$OUT/$id.merged" "$n" <<'PY'
import sys
text = open(sys.argv[1]).read().splitlines()
n = sys.argv[2]
total = next(l.split() for l in text if l.strip().startswith("total"))
# op count ops/s mean p50 p95 p99 ...
ops, p99 = total[2], total[6]
cpu = []
seen = False
for l in text:
    if l.startswith("loaders ("):
        seen = True
        continue
    if seen and l.strip() and l.strip()[0].isdigit():
        cols = l.split()
        cpu.append(next((c for c in cols if "%/" in c), "-"))
    elif seen and not l.strip():
        seen = False
print(n, ops, p99, " ".join(cpu))
PY
}

printf "%-8s %-4s %12s %10s  %s\n" loaders rep "ops/s" "p99 ms" "client cpu per loader (%/cores)"
: >"$OUT/results"
orders=("1 2 4" "4 2 1" "2 4 1")
for rep in $(seq 1 "$REPS"); do
  for n in ${orders[$(( (rep - 1) % 3 ))]}; do
    read -r nn ops p99 cpu < <(run_with "$n" "$rep")
    printf "%-8s %-4s %12s %10s  %s\n" "$nn" "$rep" "$ops" "$p99" "$cpu"
    echo "$nn $ops $p99" >>"$OUT/results"
  done
done
python3 - "$OUT/results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
print("\nmedians:")
for n in ("1", "2", "4"):
    sel = [r for r in rows if r[0] == n]
    if sel:
        print(f"  {n} loader(s): {statistics.median(float(r[1]) for r in sel):,.0f} ops/s, p99 {statistics.median(float(r[2]) for r in sel):.2f} ms")
PY
