#!/usr/bin/env bash
# Merging long runs from many loaders: what `casslab merge` costs in time and memory. Two real
# shards of one run (the key-value mix at 2,000/s for 60 s) are exported, then stretched into
# SHARDS exports of MINUTES minutes each by repeating their measured intervals on the clock
# (each keeps its own histograms, so every merged interval really adds SHARDS histograms up),
# and `casslab merge` of them is timed with its peak RSS, REPS times. With BEFORE=path/to/an/
# older/casslab, that build merges the same exports too, the order of the two builds rotated
# every repetition. Target: memory that does not grow with the run's length beyond its rows.
#
# Usage: bench/merge.sh [SHARDS=10] [MINUTES=60] [REPS=2]
# Environment: NODE (ADDRESS:PORT; else `casslab local up $UP_ARGS`), CASSLAB, BEFORE
set -euo pipefail
cd "$(dirname "$0")/.."
SHARDS="${1:-10}"
MINUTES="${2:-60}"
REPS="${3:-2}"
OUT="$(mktemp -d)"
trap 'rm -rf "$OUT"' EXIT

. bench/lib.sh
bench_casslab
bench_node
echo "node: $NODE; two real shards of 60 s, stretched to $SHARDS shards of $MINUTES min" >&2
run_id="merge-bench-$$"
for i in 0 1; do
  "$CASSLAB" run kv -P rows=20000 -P keyspace=casslab_merge_bench --hosts "$HOST" --port "$PORT" \
    --shard "$i/2" --run-id "$run_id" --rate 2000 --duration 60s --warmup 2s --concurrency 32 --no-lint \
    --store "$OUT/s$i.db" --json "$OUT/s$i.json" >"$OUT/s$i.out" 2>&1 &
done
wait
mkdir -p "$OUT/shards"
python3 - "$OUT" "$SHARDS" "$MINUTES" <<'PY'
import json, sys
out, shards, minutes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
base = [json.load(open(f"{out}/s{i}.json")) for i in (0, 1)]
for i in range(shards):
    d = json.loads(json.dumps(base[i % 2]))
    d["config"]["shard"]["index"], d["config"]["shard"]["count"] = i, shards
    ivs = d["intervals"]
    run = [iv for iv in ivs if iv["phase"] == "run"]
    rows = [iv for iv in ivs if iv["phase"] != "run"]
    span = -(-(run[-1]["end_ms"] - run[0]["start_ms"]) // 1000) * 1000
    k = 0
    while len(rows) < minutes * 60:
        for iv in run:
            rows.append(dict(iv, start_ms=iv["start_ms"] + k * span, end_ms=iv["end_ms"] + k * span))
        k += 1
    for n, iv in enumerate(rows):
        iv["index"] = n
    d["intervals"] = rows
    json.dump(d, open(f"{out}/shards/{i}.json", "w"))
PY
echo "exports: $(du -sh "$OUT/shards" | cut -f1) in $SHARDS files of $(python3 -c "import json;print(len(json.load(open('$OUT/shards/0.json'))['intervals']))") intervals" >&2

builds=("new:$CASSLAB")
[ -n "${BEFORE:-}" ] && builds+=("before:$BEFORE")
printf "%-8s %4s %10s %12s %10s\n" build rep seconds "peak MiB" intervals
for rep in $(seq 1 "$REPS"); do
  order=("${builds[@]}")
  if [ $((rep % 2)) -eq 0 ] && [ ${#builds[@]} -gt 1 ]; then order=("${builds[1]}" "${builds[0]}"); fi
  for b in "${order[@]}"; do
    name="${b%%:*}"
    bin="${b#*:}"
    rm -f "$OUT/m.db"*
    /usr/bin/time -f "%e %M" -o "$OUT/time" "$bin" merge "$OUT/shards" --store "$OUT/m.db" >/dev/null 2>"$OUT/merge.err" ||
      { echo "$name: merge failed:" >&2; tail -3 "$OUT/merge.err" >&2; continue; }
    read -r secs kb <"$OUT/time"
    n=$("$CASSLAB" show 1 --store "$OUT/m.db" --format csv | tail -n +2 | cut -d, -f1 | sort -u | wc -l)
    printf "%-8s %4s %10s %12.0f %10s\n" "$name" "$rep" "$secs" "$((kb / 1024))" "$n"
  done
done
