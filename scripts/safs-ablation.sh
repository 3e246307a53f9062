#!/usr/bin/env bash
# SAFS's mechanisms switched off (or on) one at a time, on two cells of the
# evaluation matrix at its standard level: afd-saturated (16A2F at a full batch)
# and zb-comm-bound at 80% web-search load, beside the best simple baselines
# and the compute-only bound. Prints one markdown table per scenario on
# stdout (docs/safs.md, "Ablation"); runs go to out/safs-ablation/.
# Run scripts/setup.sh first. Environment: scripts/common.sh (SAFS_RESUME=1
# keeps finished runs).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/common.sh
out=out/safs-ablation

# name|transport|overrides (the scenario's standard-level settings come first).
variants=(
  "safs (defaults)|safs|"
  "short transfers wait for grants (whole_flow_blind_bdps = 1)|safs|--set transport.safs.whole_flow_blind_bdps=1"
  "every uplink limit reported (report_horizon_us = 0)|safs|--set transport.safs.report_horizon_us=0"
  "both (the defaults before them)|safs|--set transport.safs.whole_flow_blind_bdps=1 --set transport.safs.report_horizon_us=0"
  "with stream leases (stream_leases = true)|safs|--set transport.safs.stream_leases=true"
  "EDF at line rate (urgent_first = true)|safs|--set transport.safs.urgent_first=true"
  "blind caps not learned (learn_blind_budget = false)|safs|--set transport.safs.learn_blind_budget=false"
  "every small decrease sent (only_needed_decreases = false)|safs|--set transport.safs.only_needed_decreases=false"
  "flows sent whole blind granted too (schedule_blind_flows = true)|safs|--set transport.safs.schedule_blind_flows=true"
  "every uplink report move sent at once (pace_reports = false)|safs|--set transport.safs.pace_reports=false"
  "background by shortest remaining first (background_srpt = true)|safs|--set transport.safs.background_srpt=true"
  "background left to its window, not granted (grant_background = false)|safs|--set transport.safs.grant_background=false"
  "tail loss probes (tail_loss_probe = true)|safs|--set transport.safs.tail_loss_probe=true"
  "transfers announced ahead (announce_ahead = true)|safs|--set transport.safs.announce_ahead=true"
  "background streams (background_streams = true)|safs|--set transport.safs.background_streams=true"
  "coordinated senders (uplink_by_deadline, report_keeps_cap = true)|safs|--set transport.safs.uplink_by_deadline=true --set transport.safs.report_keeps_cap=true"
  "slack-adaptive service (slack_adaptive = true)|safs|--set transport.safs.slack_adaptive=true"
  "urgent over blind background (urgent_over_blind_background = true)|safs|--set transport.safs.urgent_over_blind_background=true"
  "blind caps as a window (blind_cap_as_window = true)|safs|--set transport.safs.blind_cap_as_window=true"
  "pfabric-edf|pfabric-edf|"
  "dctcp-llf|dctcp-llf|"
  "dctcp-prio|dctcp-prio|"
)

afd_standard=(--set inference.output_tokens_min=4 --set inference.output_tokens_max=6
  --set inference.measured_requests=96)
zb_standard=(--set pipeline.microbatches=4 --set "poisson[0].load=0.8")

# dir, title, scenario file, metric, scale, bound (a summary path of the
# first run, or "free" for a run with free communication), standard-level
# overrides...
run_scenario() {
  local label=$1 title=$2 file=$3 metric=$4 scale=$5 bound=$6 name transport overrides i=0
  shift 6
  local dirs=()
  for v in "${variants[@]}"; do
    IFS='|' read -r name transport overrides <<<"$v"
    # shellcheck disable=SC2086 # overrides are words
    run_one "$out/$label/$i" "$file" --transport "$transport" "$@" $overrides
    dirs+=("$out/$label/$i|$name")
    i=$((i + 1))
  done
  if [[ $bound == free ]]; then
    run_one "$out/$label/compute-only" "$file" "$@" --set inference.free_communication=true
    bound="$out/$label/compute-only|$metric"
  else
    bound="$out/$label/0|$bound"
  fi
  "$python" - "$metric" "$scale" "$title" "$bound" "${dirs[@]}" <<'EOF'
import json, sys
metric, scale, title, bound = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]

def value(summary, path):
    for key in path.split("."):
        summary = summary[key]
    return summary

def load(d):
    with open(d + "/summary.json") as f:
        return json.load(f)

print(f"{title}:\n")
print("| run | result (ms) | control per urgent transfer | urgent control per 100 data | scheduling packets per 100 data (all flows) |")
print("|---|---:|---:|---:|---:|")
for entry in sys.argv[5:]:
    d, name = entry.split("|", 1)
    s = load(d)
    t = s["transport_stats"]
    per100 = 100 * t["scheduling_packets"] / t["data_packets"] if t["data_packets"] else 0
    u = s["urgent"]
    print(f"| {name} | {value(s, metric) * scale:.3f} | {u['control_packets_per_flow']:.1f} "
          f"| {u['control_per_100_data_packets']:.1f} | {per100:.1f} |")
bound_dir, bound_metric = bound.split("|", 1)
print(f"| compute only | {value(load(bound_dir), bound_metric) * scale:.3f} | | | |\n")
EOF
}

fresh "$out"
run_scenario afd-saturated "afd-saturated, p99 TPOT" scenarios/eval/afd-saturated.toml inference.tpot_p99_ms 1 \
  free "${afd_standard[@]}"
run_scenario zb-comm-bound "zb-comm-bound at 80% web search, iteration" \
  scenarios/eval/zb-comm-bound.toml compute.iteration_time_s 1000 compute.planned_iteration_time_s "${zb_standard[@]}"
