#!/usr/bin/env bash
# Memory and long runs: casslab (release) runs the key-value mix at maximum throughput with
# 1,024 requests in flight for MINUTES (30 by default) against one Cassandra node. Every minute
# it prints casslab's resident memory (VmRSS), then the slope of RSS over the run (MiB per hour,
# a least-squares line through the samples after the first minute, when pools and histograms
# have reached their size), the results store's growth per hour, and how long `casslab report`
# (HTML), `casslab report --format json` and `casslab show` take on the run, with their peak RSS.
# Targets: a flat RSS of at most 64 MiB, the last minute's within 10% of minute 5's; a report of
# a one-hour run in at most 1 s.
#
# Usage: bench/soak.sh [MINUTES=30]
# Environment: NODE (ADDRESS:PORT; else `casslab local up $UP_ARGS`), CONC (1024), CASSLAB,
#   CASSLAB_ARGS (more options for the run and its load, e.g. "--verify": every read checked)
set -euo pipefail
cd "$(dirname "$0")/.."
MINUTES="${1:-30}"
CONC="${CONC:-1024}"
ROWS=200000
OUT="$(mktemp -d)"
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$OUT"' EXIT
pid=""

. bench/lib.sh
bench_casslab
bench_node
STORE="$OUT/soak.db"
echo "node: $NODE; $CONC in flight for $MINUTES min" >&2
read -r -a EXTRA <<<"${CASSLAB_ARGS:-}"
"$CASSLAB" run kv -P rows=$ROWS --hosts "$HOST" --port "$PORT" --load-only "${EXTRA[@]}" --store "$OUT/load.db" >/dev/null

store_bytes() { du -cb "$STORE"* 2>/dev/null | tail -1 | cut -f1; }

"$CASSLAB" -q run kv -P rows=$ROWS --skip-load --hosts "$HOST" --port "$PORT" --concurrency "$CONC" \
  --duration "${MINUTES}m" --warmup 0s "${EXTRA[@]}" --store "$STORE" >"$OUT/out" 2>"$OUT/err" &
pid=$!
start=$(date +%s.%N)
printf "%6s %10s %12s\n" minute rss_MiB store_MiB
: >"$OUT/rss"
for m in $(seq 1 "$MINUTES"); do
  # sleep to the minute mark, measured from the start
  python3 -c "import time; time.sleep(max(0.0, $start + 60 * $m - time.time()))"
  kill -0 "$pid" 2>/dev/null || break
  rss_kib=$(awk '/^VmRSS/{print $2}' "/proc/$pid/status")
  rss=$(python3 -c "print(f'{$rss_kib/1024:.1f}')")
  printf "%6s %10s %12s\n" "$m" "$rss" "$(python3 -c "print(f'{$(store_bytes)/1048576:.2f}')")"
  echo "$m $rss" >>"$OUT/rss"
done
wait "$pid" || { echo "casslab run failed:" >&2; tail -5 "$OUT/err" >&2; exit 1; }
pid=""
end=$(date +%s.%N)
grep -E "reads verified|^ *data:" "$OUT/out" || true
ops=$(awk '$1=="total"{print $2}' "$OUT/out" | tail -1)

run_id=$("$CASSLAB" runs --store "$STORE" --limit 1 --format csv | awk -F, 'NR==2{print $1}')
# seconds and peak RSS (MiB) of reading the run back: the HTML and JSON reports, and `show`
# (which the end of every `casslab run` prints)
cost() {
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
t = time.monotonic()
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
print(f"{time.monotonic() - t:.2f} s, {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MiB peak")
PY
}
html=$(cost "$CASSLAB" -q report "$run_id" --store "$STORE" -o "$OUT/report.html")
json=$(cost "$CASSLAB" -q report "$run_id" --store "$STORE" --format json -o "$OUT/report.json")
show=$(cost "$CASSLAB" -q show "$run_id" --store "$STORE")

python3 - "$OUT/rss" "$start" "$end" "$(store_bytes)" "${ops:-0}" <<'PY'
import sys
rows = [tuple(map(float, l.split())) for l in open(sys.argv[1])]
start, end, store, ops = map(float, sys.argv[2:])
hours = (end - start) / 3600
print()
print(f"run: {(end - start) / 60:.1f} min, {ops / (end - start):,.0f} ops/s")
if rows:
    print(f"RSS: first {rows[0][1]:.1f} MiB, last {rows[-1][1]:.1f} MiB, max {max(r[1] for r in rows):.1f} MiB")
    five = [r[1] for r in rows if r[0] == 5]
    if five:
        change = 100 * (rows[-1][1] - five[0]) / five[0]
        print(f"RSS at the end against minute 5 ({five[0]:.1f} MiB): {change:+.1f}% (target: within 10%)")
    fit = [r for r in rows if r[0] > 1] or rows
    if len(fit) >= 2:
        n = len(fit)
        mx = sum(r[0] for r in fit) / n
        my = sum(r[1] for r in fit) / n
        sxx = sum((r[0] - mx) ** 2 for r in fit)
        slope = sum((r[0] - mx) * (r[1] - my) for r in fit) / sxx if sxx else 0.0
        print(f"RSS slope after minute 1: {slope * 60:+.2f} MiB/hour")
print(f"store: {store / 1048576:.2f} MiB, growth {store / 1048576 / hours:.1f} MiB/hour")
PY
echo "report (HTML): $html"
echo "report (JSON): $json"
echo "show: $show"
