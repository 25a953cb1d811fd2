#!/usr/bin/env bash
# What the experiment method promises, simulated at a size the test suite cannot afford
# (examples/sequential_sim.rs, release build): the error rate of all sequential looks together
# with normal block differences (the t approximation alone, and calibrated), an A/A experiment
# of 10 variants per comparison and family-wide, the power a change found at an earlier look
# keeps, a look the budget made final, equivalence at the 90 % interval, an order effect, and
# the typical p99 against the p99 in a stall model. Every part has a fixed seed: the figures
# repeat. No cluster; CPU only (a few minutes at the default size on 2 cores).
# Usage: bench/sequential.sh [RUNS=1000000]      (experiments per line of part 1; the other parts
#        scale with it)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS="${1:-1000000}"
cargo build --release -q -p casslab-core --example sequential_sim
target/release/examples/sequential_sim --runs "$RUNS"
