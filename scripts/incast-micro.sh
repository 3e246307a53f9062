#!/usr/bin/env bash
# The receiver-incast microbenchmark (scenarios/micro/incast.toml) with every
# transport (a sweep into out/incast-micro/sweep/), plus SAFS with urgent
# flows served first, then one comparison table on stdout; progress on
# stderr. Run scripts/setup.sh first. Environment: scripts/common.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/common.sh
at_most_arguments 0 "$@"
out=out/incast-micro
scenario=scenarios/micro/incast.toml
fresh "$out"
sweep "$out/sweep" "$scenario" --grid "transport.name=$(transports | joined)"
dirs=()
for transport in $(transports); do dirs+=("$out/sweep/transport=$transport"); done
# SAFS with urgent flows served first (EDF at line rate) instead of just in time.
run_one "$out/safs-urgent-first" "$scenario" --transport safs --set transport.safs.urgent_first=1
dirs+=("$out/safs-urgent-first")
"$sim" compare "${dirs[@]}"
