#!/usr/bin/env bash
# FCT slowdown by flow size for every transport at 30, 50 and 70% load of
# web-search traffic (scenarios/micro/workload-fct.toml): one sweep into
# out/workload-fct/sweep/, then one table per load on stdout; progress on
# stderr. Run scripts/setup.sh first. Environment: scripts/common.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/common.sh
at_most_arguments 0 "$@"
out=out/workload-fct/sweep
loads=(0.3 0.5 0.7)
sweep "$out" scenarios/micro/workload-fct.toml \
  --grid "poisson[0].load=$(printf '%s\n' "${loads[@]}" | joined)" \
  --grid "transport.name=$(transports | joined)"
for load in "${loads[@]}"; do
  dirs=()
  for transport in $(transports); do dirs+=("$out/load=$load,transport=$transport"); done
  echo "### Load $load"
  echo
  "$sim" fct "${dirs[@]}"
  echo
done
