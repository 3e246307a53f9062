#!/usr/bin/env bash
# FCT slowdown by flow size for every transport at 30, 50 and 70% load of
# web-search traffic (scenarios/micro/workload-fct.toml). Run scripts/setup.sh first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
sim=${SAFS_SIM:-build/bin/safs-sim}
for load in 0.3 0.5 0.7; do
  dirs=()
  for transport in $("$sim" transports | awk '{print $1}'); do
    dir="out/workload-fct/load$load-$transport"
    "$sim" run scenarios/micro/workload-fct.toml --transport "$transport" \
      --set "poisson[0].load=$load" --out "$dir" --quiet
    dirs+=("$dir")
  done
  echo "### Load $load"
  echo
  "$sim" fct "${dirs[@]}"
  echo
done
