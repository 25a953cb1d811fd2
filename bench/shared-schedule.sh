#!/usr/bin/env bash
# Whether sharing a rate's schedule among the engine's threads changes the rate the client can
# keep. The same ramp (kv, 50/50 read/update, 200k rows) past the client's ceiling, with
# THREADS engine threads and CONC requests in flight in all (CONC/THREADS each), once with each
# thread following its own slice of the schedule (the default) and once with the threads
# sharing it (--shared-schedule: whichever has room starts the next operation due); the order
# of the two is swapped every repetition. Prints per run the highest level of the ramp kept
# (achieved within 5% of offered, every level below it kept too), its p99, the operations due
# by the end and never started, then the medians per mode and their ratio.
# Usage: bench/shared-schedule.sh [REPS=5] [SECONDS=40]
#        NODE=ADDRESS:PORT (else `casslab local up`, UP_ARGS), THREADS=2, CONC=8, FROM=1000, TO=40000,
#        CASSLAB=path/to/casslab (else a release build of this tree)
set -euo pipefail
cd "$(dirname "$0")/.."
REPS="${1:-5}"
SECS="${2:-40}"
THREADS="${THREADS:-2}"
CONC="${CONC:-8}"
FROM="${FROM:-1000}"
TO="${TO:-40000}"
ROWS=200000
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

if [ -z "${CASSLAB:-}" ]; then
  echo "building casslab (release) ..." >&2
  cargo build --release -q -p casslab
  CASSLAB="$PWD/target/release/casslab"
fi
if [ -z "${NODE:-}" ]; then
  # shellcheck disable=SC2086
  NODE="$("$CASSLAB" local up ${UP_ARGS:-} | tail -1 | cut -d, -f1)"
fi
echo "node: $NODE; loading $ROWS rows once ..." >&2
"$CASSLAB" run kv -P rows=$ROWS --load-only --hosts "$NODE" --store "$OUT/load.db" >/dev/null 2>&1

# one_run MODE REP -> prints "MODE REP kept_per_s p99_ms never_started"
one_run() {
  local mode="$1" rep="$2" flag=()
  [ "$mode" = shared ] && flag=(--shared-schedule)
  "$CASSLAB" run kv -P rows=$ROWS --skip-load --hosts "$NODE" --no-lint --warmup 0s --duration "${SECS}s" \
    --rate "ramp $FROM..$TO over ${SECS}s" --threads "$THREADS" --concurrency "$CONC" "${flag[@]}" \
    --store "$OUT/runs.db" >"$OUT/$mode-$rep.out" 2>"$OUT/$mode-$rep.err"
  python3 - "$OUT/$mode-$rep.out" "$mode" "$rep" <<'PY'
import re, sys
text = open(sys.argv[1]).read().splitlines()
mode, rep = sys.argv[2], sys.argv[3]
rows, inside = [], False
for l in text:
    if l.startswith("latency against offered rate"):
        inside = True
        continue
    if inside and l.split()[:1] == ["level"]:
        continue
    if inside:
        cells = l.split()
        if not cells or not re.match(r"^[\d.]+$", cells[-1]):
            break
        # …, offered/s, started/s, achieved/s, p50, p99, errors, backlog
        offered, achieved, p99 = float(cells[-7]), float(cells[-5]), cells[-3]
        rows.append((offered, achieved, p99))
kept, p99 = 0.0, "-"
for offered, achieved, p in rows:
    if achieved < 0.95 * offered:
        break
    kept, p99 = offered, p
never = next((m.group(1) for l in text for m in [re.search(r"never started (\d+)", l)] if m), "0")
print(mode, rep, f"{kept:.0f}", p99, never)
PY
}

printf "%-10s %-4s %14s %8s %14s\n" mode rep "kept ops/s" "p99 ms" "never started"
: >"$OUT/results"
for rep in $(seq 1 "$REPS"); do
  if [ $((rep % 2)) -eq 1 ]; then order="sliced shared"; else order="shared sliced"; fi
  for mode in $order; do
    one_run "$mode" "$rep" | tee -a "$OUT/results" | awk '{ printf "%-10s %-4s %14s %8s %14s\n", $1, $2, $3, $4, $5 }'
  done
done

python3 - "$OUT/results" <<'PY'
import statistics, sys
by = {}
for l in open(sys.argv[1]):
    mode, _, kept, _, _ = l.split()
    by.setdefault(mode, []).append(float(kept))
print()
for mode in ("sliced", "shared"):
    v = by.get(mode, [])
    if v:
        print(f"{mode:<10} median kept {statistics.median(v):.0f} ops/s over {len(v)} runs (min {min(v):.0f}, max {max(v):.0f})")
if by.get("sliced") and by.get("shared") and statistics.median(by["sliced"]) > 0:
    print(f"shared / sliced: {statistics.median(by['shared']) / statistics.median(by['sliced']):.3f}")
PY
