#!/usr/bin/env bash
# How the simulator's cost grows with the network: the fat-tree permutation of
# bench/sim_bench.cc (every host sends 2 MB to another, one cycle through all
# hosts) at k = 8, 16, 24 and 32 (128 to 8192 hosts) with DCTCP, and at k = 16
# with each other transport. One process per case, one after another, so each
# peak RSS is its own and no two share the cores. Prints sim_bench's lines;
# bench/README.md tabulates one run. Run scripts/setup.sh first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
expect_prefix=bench/scaling.sh
# shellcheck source=scripts/expect.sh
source scripts/expect.sh
expect_no_more_arguments $# 0 "bench/scaling.sh"
expect_executable BIN/sim_bench "${BIN:-build/bin}/sim_bench" "a benchmark binary (scripts/setup.sh builds it)"
bin=${BIN:-build/bin}
echo "== fat tree k, DCTCP =="
for k in 8 16 24 32; do "$bin/sim_bench" fattree "$k" dctcp | head -1; done
echo "== k = 16, each transport =="
for t in dctcp homa pfabric safs; do "$bin/sim_bench" fattree 16 "$t" | head -1; done
