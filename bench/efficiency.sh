#!/usr/bin/env bash
# Client CPU per operation: casslab vs. the bare scylla driver (../shared/bench/driver-floor),
# on the same key-value 50/50 read/update mix (8-byte blob keys, 100-byte blob values,
# 200k rows, 128 in flight) against a local Cassandra node, (a) at maximum throughput and
# (b) at a fixed 5,000 ops/s. Both run in this one invocation, alternating, REPS times each;
# the figure is user+sys CPU of the whole process divided by the operations it completed.
# Prints every measurement and the medians. Usage: bench/efficiency.sh [REPS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
REPS="${1:-3}"
SECS="${2:-30}"
ROWS=200000
CONC=128
RATE=5000
FLOOR_SRC="${FLOOR_SRC:-../shared/bench/driver-floor}"
FLOOR_TARGET="$PWD/target/driver-floor"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

echo "building casslab and the driver-floor reference (release) ..." >&2
cargo build --release -q -p casslab
CARGO_TARGET_DIR="$FLOOR_TARGET" cargo build --release -q --manifest-path "$FLOOR_SRC/Cargo.toml"
CASSLAB="$PWD/target/release/casslab"
FLOOR="$FLOOR_TARGET/release/baseline"

NODE="$("$CASSLAB" local up | tail -1 | cut -d, -f1)"
echo "node: $NODE" >&2

echo "loading both data sets (skipped when already loaded) ..." >&2
"$CASSLAB" run kv -P rows=$ROWS --load-only --concurrency $CONC --store "$OUT/load.db" >/dev/null
NODE="$NODE" "$FLOOR" load $ROWS $CONC >/dev/null 2>&1   # idempotent upserts of the same rows

# cpu_per_op TOOL MODE -> prints "cpu_s ops"
measure() {
  local tool="$1" mode="$2" rate_args=() floor_rate=0
  if [ "$mode" = rate ]; then rate_args=(--rate $RATE); floor_rate=$RATE; fi
  if [ "$tool" = casslab ]; then
    /usr/bin/time -f "%U %S" -o "$OUT/time" "$CASSLAB" run kv -P rows=$ROWS --skip-load --hosts "$NODE" \
      --duration "${SECS}s" --warmup 0s --concurrency $CONC "${rate_args[@]}" --store "$OUT/bench.db" >"$OUT/out" 2>"$OUT/err"
    ops=$(awk '$1=="total"{print $2}' "$OUT/out" | tail -1)
    errs=$(awk '$1=="total"{print $NF}' "$OUT/out" | tail -1)
    ops=$((ops + errs))
  else
    /usr/bin/time -f "%U %S" -o "$OUT/time" env NODE="$NODE" "$FLOOR" run $ROWS "$SECS" $CONC $floor_rate >"$OUT/out" 2>"$OUT/err"
    ops=$(sed -n 's/^RUN .* ops=\([0-9]*\) .*/\1/p' "$OUT/out")
  fi
  read -r u s < <(tail -1 "$OUT/time")
  echo "$u $s $ops"
}

printf "%-8s %-5s %-3s %10s %10s %12s\n" tool mode rep ops cpu_s cpu_us/op
: >"$OUT/results"
for rep in $(seq 1 "$REPS"); do
  for mode in max rate; do
    for tool in floor casslab; do
      read -r u s ops < <(measure "$tool" "$mode")
      us=$(python3 -c "print(f'{($u+$s)*1e6/max($ops,1):.2f}')")
      printf "%-8s %-5s %-3s %10s %10s %12s\n" "$tool" "$mode" "$rep" "$ops" "$(python3 -c "print(f'{$u+$s:.2f}')")" "$us"
      echo "$tool $mode $us $ops" >>"$OUT/results"
    done
  done
done

python3 - "$OUT/results" "$SECS" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
secs = float(sys.argv[2])
def med(tool, mode, col):
    return statistics.median(float(r[col]) for r in rows if r[0] == tool and r[1] == mode)
print()
print("medians (whole-process user+sys CPU / completed operations):")
for mode, label in (("max", "max throughput"), ("rate", "fixed 5,000 ops/s")):
    f, c = med("floor", mode, 2), med("casslab", mode, 2)
    fo, co = med("floor", mode, 3) / secs, med("casslab", mode, 3) / secs
    print(f"  {label:<18} driver-floor {f:7.2f} us/op ({fo:,.0f} ops/s)   casslab {c:7.2f} us/op ({co:,.0f} ops/s)   ratio {c/f:.2f}x")
PY
