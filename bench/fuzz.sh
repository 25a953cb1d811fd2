#!/usr/bin/env bash
# Runs the property tests of the files users hand casslab (crates/casslab-core/tests/fuzz_files.rs)
# with many more cases than the suite does, and prints per property the cases run, how many were
# accepted, the slowest input and the process's peak memory.
#   bench/fuzz.sh [CASES]     (default 2000 per property)
set -euo pipefail
cd "$(dirname "$0")/.."
cases="${1:-2000}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
CASSLAB_FUZZ_CASES="$cases" cargo test --release -q -p casslab-core --test fuzz_files -- --test-threads=1 --nocapture 2>"$log" | grep -E '^test result' || true
# each property's last line is its tally
grep '^fuzz: ' "$log" | awk '{ last[$2] = $0 } END { for (k in last) print last[k] }' | sort
