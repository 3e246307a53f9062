#!/usr/bin/env bash
# Regenerates the README's figures in docs/figures/ from fresh runs (Release
# build in build/; run scripts/setup.sh first). Runs go to out/figures/
# (SAFS_RESUME=1 keeps the points that finished before); progress on
# stderr, the figures written on stdout. Environment: scripts/common.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/common.sh
at_most_arguments 0 "$@"
needs_transports dctcp safs  # the figures compare the two
out=out/figures
fig=docs/figures
mkdir -p "$fig"
all=$(transports | joined)
fresh "$out"

# ZeroBubble training: every transport, k = 0..5 background flows per stage.
sweep "$out/zb" scenarios/paper/zb-training.toml \
  --grid "transport.name=$all" --grid pipeline.background_flows_per_stage=0,1,2,3,4,5 \
  --metric compute.iteration_time_s --metric compute.planned_iteration_time_s
tools/plot iteration "$out/zb/sweep.csv" --force -o "$fig/zb-iteration.png"
tools/plot gantt "$out/zb/transport=dctcp,background_flows_per_stage=2" \
  "$out/zb/transport=safs,background_flows_per_stage=2" --force -o "$fig/zb-gantt-k2.png"

# Web-search traffic at 50% load: FCT slowdown of every flow.
sweep "$out/fct" scenarios/micro/workload-fct.toml --set "poisson[0].load=0.5" \
  --grid "transport.name=$all" --metric flows.slowdown_p99
# shellcheck disable=SC2046
tools/plot fct-cdf $(ls -d "$out"/fct/transport=*) --force -o "$fig/fct-cdf-load0.5.png"

# Receiver incast: the receiver's switch queue with DCTCP and SAFS.
for t in dctcp safs; do
  run_one "$out/incast-$t" scenarios/micro/incast.toml --transport "$t" --queue-sample-us 10
done
tools/plot queue "$out/incast-dctcp" "$out/incast-safs" --force -o "$fig/incast-queue.png"

# 16A2F inference: p50 and p99 TPOT of every transport.
sweep "$out/afd" scenarios/paper/afd-16a2f.toml --grid "transport.name=$all" \
  --metric inference.tpot_p50_ms --metric inference.tpot_p99_ms
# shellcheck disable=SC2046
tools/plot tpot $(ls -d "$out"/afd/transport=*) --force -o "$fig/afd-tpot.png"
