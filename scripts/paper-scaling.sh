#!/usr/bin/env bash
# How the cost of the paper experiments grows with their size: one SAFS run of
# each default and of a larger variant (ZB training with 8 stages and 16
# microbatches; AFD 32A4F), with simulated time, events, wall time and peak
# memory. Writes out/scaling/<variant>/ and prints one markdown table on
# stdout; progress on stderr. Run scripts/setup.sh first.
# The runs go one after another, not through a parallel sweep: wall time and
# peak memory are what this measures, and runs side by side would share the
# cores. Wall times still depend on the machine and its load.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/common.sh
at_most_arguments 0 "$@"
zb=scenarios/paper/zb-training.toml
afd=scenarios/paper/afd-16a2f.toml
run() {  # name, scenario, overrides...
  local name=$1 scenario=$2
  shift 2
  run_one "out/scaling/$name" "$scenario" --transport safs "$@"
}
run zb-4x8 "$zb" --set pipeline.background_flows_per_stage=2
run zb-8x16 "$zb" --set pipeline.background_flows_per_stage=2 --set pipeline.stages=8 \
  --set pipeline.microbatches=16 --set topology.hosts=24
run afd-16a2f "$afd"
run afd-32a4f "$afd" --set inference.attention_instances=32 --set inference.ffn_instances=4 \
  --set inference.prefill_hosts=16 --set topology.hosts=54
"$sim" compare out/scaling/zb-4x8 out/scaling/zb-8x16 out/scaling/afd-16a2f out/scaling/afd-32a4f \
  --metric "simulated_s:simulated (s)" --metric "events:events" --metric "wall_s:wall (s)" \
  --metric "events_per_s:M events/s:0.000001" --metric "peak_rss_mib:peak RSS (MiB)"
