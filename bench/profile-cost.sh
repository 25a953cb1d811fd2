#!/usr/bin/env bash
# What recording the node's profile costs (run --profile: async-profiler, loaded idle when the
# node started, told by jcmd to record when the run phase starts — CPU with perf_events every
# 1 ms of CPU time (itimer where they are refused), allocations every 512 KiB, locks and parks
# from 10 ms — and to stop at its end): kv (50/50 reads and updates of 100-byte blobs) on casslab's local node, (a) at maximum
# throughput (throughput and p99 at --concurrency 64) and (b) at a fixed rate (p99 from the
# intended start), with and without --profile, the order rotated every repetition (on this
# machine whatever runs first after a start is slower). Prints every measurement (with the
# CPU samples each profiled run holds, and per second of its warm-up and measured time), then the medians and
# the change with the profile on, then each ratio on/off with a 95% interval from the paired
# repetitions (bench/paired.py) against the targets at the fixed rate (throughput at least
# 0.98x, p99 at most 1.05x). "Off" is the node with the agent loaded and idle, as every
# node casslab starts runs.
#
# Usage: bench/profile-cost.sh [REPS=4] [SECONDS=20]
# Environment:
#   CASSLAB_HOME  the local cluster to use (`casslab local up $UP_ARGS` starts it when needed);
#                 recording needs nodes casslab started, so no --hosts here
#   UP_ARGS       options for that `local up` (e.g. "--base-address 127.0.0.85 --heap 1G")
#   RATE          the fixed rate of (b) (default 3000)
#   CASSLAB       the casslab binary to measure (default: a release build of this tree)
set -euo pipefail
cd "$(dirname "$0")/.."
REPS="${1:-4}"
SECS="${2:-20}"
RATE="${RATE:-3000}"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT
echo "building casslab (release) ..." >&2
. bench/lib.sh
bench_casslab
bench_node
echo "node: $NODE" >&2
COMMON=(-P rows=100000 -P keyspace=casslab_pcost --no-lint --store "$OUT/bench.db")
"$CASSLAB" run kv "${COMMON[@]}" --load-only >/dev/null 2>"$OUT/err" || { tail -5 "$OUT/err" >&2; exit 1; }

# measure on|off max|rate -> prints "ops_per_s p99_ms cpu_samples" (samples "-" when off)
measure() {
  local v="$1" mode="$2" args=(--concurrency 64)
  [ "$mode" = rate ] && args=(--rate "$RATE")
  [ "$v" = on ] && args+=(--profile)
  "$CASSLAB" run kv "${COMMON[@]}" --skip-load --duration "${SECS}s" --warmup 5s "${args[@]}" >"$OUT/out" 2>"$OUT/err"
  local samples=-
  if [ "$v" = on ]; then
    if ! grep -q "profile: 1 node" "$OUT/err"; then
      echo "profile on: nothing was recorded:" >&2
      grep -i "profile" "$OUT/err" >&2 || true
    fi
    grep -qi "async-profiler did not start" "$OUT/err" && grep -i "async-profiler" "$OUT/err" >&2
    # "profile: 1 node: 12345 CPU samples, ..." (the whole recording: warm-up and run phase)
    samples="$(sed -n 's/.*profile: 1 node: \([0-9]*\) CPU samples.*/\1/p' "$OUT/err" | tail -1)"
    samples="${samples:--}"
  fi
  # the summary's total line: op count ops/s mean p50 p95 p99 ...
  echo "$(awk '$1=="total"{print $3, $7}' "$OUT/out" | tail -1) $samples"
}

printf "%-5s %-4s %-3s %10s %10s %12s %10s\n" mode prof rep ops/s p99_ms cpu_samples samples/s
: >"$OUT/results"
for rep in $(seq 1 "$REPS"); do
  order=(on off)
  [ $((rep % 2)) = 0 ] && order=(off on)
  for mode in max rate; do
    for v in "${order[@]}"; do
      read -r tput p99 samples < <(measure "$v" "$mode")
      per_s=-
      [ "$samples" != - ] && per_s=$((samples / (SECS + 5)))  # warm-up and measured time
      printf "%-5s %-4s %-3s %10s %10s %12s %10s\n" "$mode" "$v" "$rep" "$tput" "$p99" "$samples" "$per_s"
      echo "$mode $v $tput $p99 $samples $rep" >>"$OUT/results"
    done
  done
done

echo
python3 - "$OUT/results" <<'EOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = lambda mode, v, i: statistics.median(float(r[i].replace(",", "")) for r in rows if r[0] == mode and r[1] == v)
print(f"{'mode':5} {'':4} {'ops/s':>10} {'p99 ms':>10}   (medians)")
for mode in ("max", "rate"):
    off_t, on_t, off_p, on_p = med(mode, "off", 2), med(mode, "on", 2), med(mode, "off", 3), med(mode, "on", 3)
    print(f"{mode:5} off  {off_t:10.0f} {off_p:10.2f}")
    print(f"{mode:5} on   {on_t:10.0f} {on_p:10.2f}   throughput {100*(on_t-off_t)/off_t:+.1f}%, p99 {100*(on_p-off_p)/off_p:+.1f}%")
    counts = [int(r[4]) for r in rows if r[0] == mode and r[1] == "on" and r[4] != "-"]
    if counts:
        print(f"{mode:5} CPU samples per profiled run: median {statistics.median(counts):.0f}, fewest {min(counts)} (at least 100 a second are asked for: 2,000 in a 20 s run)")
print()
print("on/off from paired repetitions (targets at the fixed rate: throughput at least 0.98x, p99 at most 1.05x):")
sys.path.insert(0, "bench")
import paired
for mode in ("max", "rate"):
    for col, name in ((2, "throughput"), (3, "p99")):
        pairs = paired.pairs_by_rep(rows, 5, col, lambda r: r[1] if r[0] == mode else None)
        goal = {} if mode == "max" else ({"at_least": 0.98} if name == "throughput" else {"at_most": 1.05})
        print(paired.ratio_line(f"{mode} {name} on/off", pairs, **goal))
EOF
