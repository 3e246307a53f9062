#!/usr/bin/env bash
# The ZeroBubble training experiment: iteration time for every transport and
# k = 0..5 background flows per stage (scenarios/paper/zb-training.toml), one
# sweep into out/zb-training/sweep/. Writes out/zb-training/results.csv and
# prints one markdown table on stdout; progress on stderr.
# Run scripts/setup.sh first. Environment: scripts/common.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/common.sh
at_most_arguments 1 "$@"
scenario=${1:-scenarios/paper/zb-training.toml}
expect_scenario "$scenario"
out=out/zb-training
fresh "$out"
sweep "$out/sweep" "$scenario" --grid "transport.name=$(transports | joined)" \
  --grid pipeline.background_flows_per_stage=0,1,2,3,4,5
mkdir -p "$out"
csv=$out/results.csv
echo "transport,k,iteration_ms,planned_iteration_ms" >"$csv"
printf '| transport | k=0 | k=1 | k=2 | k=3 | k=4 | k=5 |\n|---|---:|---:|---:|---:|---:|---:|\n'
for transport in $(transports); do
  row="| $transport |"
  for k in 0 1 2 3 4 5; do
    dir="$out/sweep/transport=$transport,background_flows_per_stage=$k"
    ms=$(metric "$dir" "compute.iteration_time_s::1000")
    # A run cut by simulation.stop_ms has no iteration time, only a lower bound.
    if grep -q '"finished": false' "$dir/summary.json"; then ms="unfinished>$ms"; fi
    echo "$transport,$k,$ms,$(metric "$dir" "compute.planned_iteration_time_s::1000")" >>"$csv"
    row+=" $ms |"
  done
  echo "$row"
done
echo
# The plan with free communication is the same for every transport: SAFS's, or the first's.
reference=safs
transports | grep -qx safs || reference=$(transports | head -1)
planned=$(metric "$out/sweep/transport=$reference,background_flows_per_stage=0" \
  "compute.planned_iteration_time_s::1000")
echo "Iteration time in ms; with free communication it is $planned ms."
