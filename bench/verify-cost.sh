#!/usr/bin/env bash
# What checking every read costs the client: CPU per operation (user+sys of the whole process
# over the operations it completed) and memory (its largest resident set) of casslab with
# verification on (--verify: every write numbered in the write record, every read's row
# decoded and matched to the writes of its key) and off (--no-verify), (a) at maximum
# throughput and (b) at a fixed 5,000 ops/s, on kv (one 100-byte blob column, 50/50 reads and
# updates) and ycsb-a (ten 100-character text columns, updates of one). On and off run on data
# sets of their own (keyspaces casslab_vcost_on_* and _off_*), loaded once, so that an
# unverified run never leaves the verified data set unknown; the order of on and off is
# rotated every repetition. Prints every measurement, then the medians and the ratios on/off.
#
# Usage: bench/verify-cost.sh [REPS=3] [SECONDS=20]
# Environment:
#   NODE       ADDRESS:PORT of the node to use; else `casslab local up $UP_ARGS` (CASSLAB_HOME)
#   UP_ARGS    options for that `local up` (e.g. "--base-address 127.0.0.84 --heap 1G")
#   WORKLOADS  the workloads (default "kv ycsb-a")
#   CASSLAB    the casslab binary to measure (default: a release build of this tree)
set -euo pipefail
cd "$(dirname "$0")/.."
REPS="${1:-3}"
SECS="${2:-20}"
CONC=128
RATE=5000
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
echo "building casslab (release) ..." >&2
. bench/lib.sh
bench_casslab
bench_node
echo "node: $NODE" >&2
read -r -a WLS <<<"${WORKLOADS:-kv ycsb-a}"
rows_of() { case "$1" in kv) echo 200000 ;; *) echo 100000 ;; esac; }

echo "loading the data sets (skipped when already loaded) ..." >&2
for w in "${WLS[@]}"; do
  for v in on off; do
    flag=--verify; [ "$v" = off ] && flag=--no-verify
    "$CASSLAB" run "$w" -P rows="$(rows_of "$w")" -P keyspace="casslab_vcost_${v}_${w//-/_}" --hosts "$HOST" --port "$PORT" \
      --load-only $flag --no-server-metrics --no-lint --store "$OUT/bench.db" >/dev/null 2>"$OUT/err" || { tail -5 "$OUT/err" >&2; exit 1; }
  done
done

# measure WORKLOAD on|off max|rate -> prints "cpu_s ops max_rss_kb"
measure() {
  local w="$1" v="$2" mode="$3" rate_args=() flag=--verify ops errs
  [ "$mode" = rate ] && rate_args=(--rate $RATE)
  [ "$v" = off ] && flag=--no-verify
  /usr/bin/time -f "%U %S %M" -o "$OUT/time" "$CASSLAB" run "$w" -P rows="$(rows_of "$w")" -P keyspace="casslab_vcost_${v}_${w//-/_}" \
    --skip-load --hosts "$HOST" --port "$PORT" --duration "${SECS}s" --warmup 0s --concurrency $CONC "${rate_args[@]}" $flag \
    --no-server-metrics --no-lint --store "$OUT/bench.db" >"$OUT/out" 2>"$OUT/err"
  if [ "$v" = on ] && ! grep -q "reads verified" "$OUT/out"; then
    echo "$w on: the reads were not verified:" >&2
    grep -i "verif" "$OUT/err" >&2 || true
  fi
  ops=$(awk '$1=="total"{print $2}' "$OUT/out" | tail -1)
  errs=$(awk '$1=="total"{print $NF}' "$OUT/out" | tail -1)
  read -r u s rss < <(tail -1 "$OUT/time")
  python3 -c "print(f'{$u + $s:.2f} {${ops:-0} + ${errs:-0}} $rss')"
}

printf "%-8s %-4s %-5s %-3s %10s %9s %10s %10s\n" workload mode verif rep ops ops/s cpu_us/op rss_mb
: >"$OUT/results"
for rep in $(seq 1 "$REPS"); do
  order=(on off)
  [ $((rep % 2)) = 0 ] && order=(off on)
  for w in "${WLS[@]}"; do
    for mode in max rate; do
      for v in "${order[@]}"; do
        read -r cpu ops rss < <(measure "$w" "$v" "$mode")
        if [ "$ops" -le 0 ]; then
          echo "$w $v $mode: no operations completed; its stderr:" >&2
          tail -5 "$OUT/err" >&2
          continue
        fi
        read -r us tput mb < <(python3 -c "print(f'{$cpu*1e6/$ops:.2f} {$ops/$SECS:.0f} {$rss/1024:.0f}')")
        printf "%-8s %-4s %-5s %-3s %10s %9s %10s %10s\n" "$w" "$mode" "$v" "$rep" "$ops" "$tput" "$us" "$mb"
        echo "$w $mode $v $us $tput $mb $rep" >>"$OUT/results"
      done
    done
  done
done

python3 - "$OUT/results" "${WLS[@]}" <<'PY'
import statistics, sys
sys.path.insert(0, "bench")
import paired
rows = [l.split() for l in open(sys.argv[1])]
def med(w, mode, v, col):
    x = [float(r[col]) for r in rows if r[0] == w and r[1] == mode and r[2] == v]
    return statistics.median(x) if x else float("nan")
print()
print("medians (CPU: whole-process user+sys / completed operations; memory: largest resident set)")
print(f"{'workload':<8} {'mode':<5} {'us/op off':>10} {'us/op on':>9} {'on/off':>7} {'ops/s off':>10} {'ops/s on':>9} {'MB off':>7} {'MB on':>6}")
for w in sys.argv[2:]:
    for mode in ("max", "rate"):
        off, on = med(w, mode, "off", 3), med(w, mode, "on", 3)
        print(f"{w:<8} {mode:<5} {off:>10.2f} {on:>9.2f} {on/off:>7.3f} {med(w,mode,'off',4):>10,.0f} {med(w,mode,'on',4):>9,.0f} {med(w,mode,'off',5):>7.0f} {med(w,mode,'on',5):>6.0f}")
print()
print("on/off from paired repetitions (target: at most 1.10x client CPU per operation):")
for w in sys.argv[2:]:
    for mode in ("max", "rate"):
        pairs = paired.pairs_by_rep(rows, 6, 3, lambda r: r[2] if r[:2] == [w, mode] else None)
        print(paired.ratio_line(f"{w} {mode} CPU/op on/off", pairs, at_most=1.1))
PY
