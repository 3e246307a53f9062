#!/usr/bin/env bash
# How late no-bubble timestamps may be before SAFS stops helping: ZB-H1 with
# exposed communication at 80% web-search load (the evaluation matrix's
# zb-comm-bound at its quick level) with every timestamp the transport sees
# late by 0 to 2 slacks (timestamps.bias_of_slack; docs/imperfect-semantics.md),
# for SAFS just in time (the default), SAFS with urgent_first (EDF at line
# rate), the static priority class and the two EDF/laxity baselines. Prints
# one markdown table of iteration times (ms) on stdout (docs/safs.md,
# "Timestamps that are late"); runs go to out/timestamp-bias/. Run
# scripts/setup.sh first. Environment: scripts/common.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/common.sh
out=out/timestamp-bias
biases=0,0.25,0.5,1,2
scenario=scenarios/eval/zb-comm-bound.toml
quick=(--set pipeline.microbatches=4 --set "poisson[0].load=0.8")
metric=(--metric compute.iteration_time_s)
fresh "$out"
sweep "$out/baselines" "$scenario" "${quick[@]}" "${metric[@]}" \
  --grid "timestamps.bias_of_slack=$biases" --grid transport.name=safs,dctcp-prio,pfabric-edf,dctcp-llf
sweep "$out/urgent-first" "$scenario" "${quick[@]}" "${metric[@]}" --transport safs \
  --set transport.safs.urgent_first=true --grid "timestamps.bias_of_slack=$biases"
"$python" - "$out" "$biases" <<'EOF'
import csv, sys
out, biases = sys.argv[1], sys.argv[2].split(",")
value = {}
for row in csv.DictReader(open(f"{out}/baselines/sweep.csv")):
    value[(row["transport.name"], row["timestamps.bias_of_slack"])] = float(row["compute.iteration_time_s"])
for row in csv.DictReader(open(f"{out}/urgent-first/sweep.csv")):
    value[("safs, urgent_first", row["timestamps.bias_of_slack"])] = float(row["compute.iteration_time_s"])
runs = ["safs", "safs, urgent_first", "dctcp-prio", "pfabric-edf", "dctcp-llf"]
def bias_key(b):  # the sweep writes the value as given
    return next(k for (t, k) in value if t == "safs" and float(k) == float(b))
print("| timestamps late by (slacks) | " + " | ".join(runs) + " |")
print("|---:|" + "---:|" * len(runs))
for b in biases:
    k = bias_key(b)
    print(f"| {b} | " + " | ".join(f"{value[(r, k)] * 1000:.3f}" for r in runs) + " |")
EOF
