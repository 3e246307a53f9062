#!/usr/bin/env bash
# Runs every benchmark against the Release build in build/ and prints the
# figures quoted in bench/README.md. Run scripts/setup.sh first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
expect_prefix=bench/run.sh
# shellcheck source=scripts/expect.sh
source scripts/expect.sh
expect_no_more_arguments $# 0 "bench/run.sh"
expect_executable BIN/sim_bench "${BIN:-build/bin}/sim_bench" "a benchmark binary (scripts/setup.sh builds it)"
echo "== event queue: hold model (ns per pop+push) =="
# Each hold benchmark sets its own minimum time (0.2 s, event_queue_bench.cc),
# which takes precedence over --benchmark_min_time.
${BIN:-build/bin}/event_queue_bench
echo
echo "== whole simulator =="
${BIN:-build/bin}/sim_bench incast
${BIN:-build/bin}/sim_bench fattree
echo
echo "== topology building and route set-up =="
for k in 16 48 64 128; do ${BIN:-build/bin}/topology_bench fattree "$k"; done
${BIN:-build/bin}/topology_bench leafspine 4096 16 16
