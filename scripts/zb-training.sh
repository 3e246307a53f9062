#!/usr/bin/env bash
# The ZeroBubble training experiment: iteration time for every transport and
# k = 0..5 background flows per stage (scenarios/paper/zb-training.toml).
# Writes out/zb-training/<transport>-k<k>/, out/zb-training/results.csv and
# prints one markdown table.
# Run scripts/setup.sh first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
sim=${SAFS_SIM:-build/bin/safs-sim}
scenario=${1:-scenarios/paper/zb-training.toml}
metric() {  # the value of one summary metric of one run
  "$sim" compare "$1" --metric "$2" | tail -1 | awk -F'|' '{gsub(/ /, "", $4); print $4}'
}
mkdir -p out/zb-training
csv=out/zb-training/results.csv
echo "transport,k,iteration_ms,planned_iteration_ms" >"$csv"
printf '| transport | k=0 | k=1 | k=2 | k=3 | k=4 | k=5 |\n|---|---:|---:|---:|---:|---:|---:|\n'
for transport in $("$sim" transports | awk '{print $1}'); do
  row="| $transport |"
  for k in 0 1 2 3 4 5; do
    dir="out/zb-training/$transport-k$k"
    "$sim" run "$scenario" --transport "$transport" \
      --set "pipeline.background_flows_per_stage=$k" --out "$dir" --quiet
    ms=$(metric "$dir" "compute.iteration_time_s::1000")
    # A run cut by simulation.stop_ms has no iteration time, only a lower bound.
    if grep -q '"finished": false' "$dir/summary.json"; then ms="unfinished>$ms"; fi
    echo "$transport,$k,$ms,$(metric "$dir" "compute.planned_iteration_time_s::1000")" >>"$csv"
    row+=" $ms |"
  done
  echo "$row"
done
echo
echo "Iteration time in ms; with free communication it is $(metric "out/zb-training/safs-k0" "compute.planned_iteration_time_s::1000") ms."
