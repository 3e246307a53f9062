#!/usr/bin/env bash
# How late no-bubble timestamps may be before SAFS stops helping: ZB-H1 with
# exposed communication at 80% web-search load (the evaluation matrix's
# zb-comm-bound at its standard level) with every timestamp the transport sees
# late by 0 to 2 slacks (timestamps.bias_of_slack; docs/imperfect-semantics.md),
# for SAFS just in time (the default), SAFS without waiting consumers told
# (timestamps.waiting_updates = false), SAFS with urgent_first (EDF at line
# rate), the static priority class and the two EDF/laxity baselines. Prints
# one markdown table of iteration times (ms) on stdout (docs/safs.md,
# "Timestamps that are late"); runs go to out/timestamp-bias/. Run
# scripts/setup.sh first. Environment: scripts/common.sh, and
#   SEEDS   run seeds, comma-separated (default 1): with more than one, each
#           cell is the mean over them and its range, "mean (min-max)".
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seeds=${SEEDS:-1}
# A seed is at most 18 digits (the scenario's int64 range), each once.
if [[ ! $seeds =~ ^[0-9]{1,18}(,[0-9]{1,18})*$ ]] ||
  [[ -n $(tr , '\n' <<<"$seeds" | sed 's/^0*//' | sort | uniq -d) ]]; then
  echo "timestamp-bias: SEEDS '$seeds': expected run seeds, comma-separated, each once (1,2,3,4)" >&2
  exit 2
fi
source scripts/common.sh
at_most_arguments 0 "$@"
out=out/timestamp-bias
biases=0,0.25,0.5,1,2
scenario=scenarios/eval/zb-comm-bound.toml
standard=(--set pipeline.microbatches=4 --set "poisson[0].load=0.8")
metric=(--metric compute.iteration_time_s --grid "simulation.seed=$seeds")
fresh "$out"
sweep "$out/baselines" "$scenario" "${standard[@]}" "${metric[@]}" \
  --grid "timestamps.bias_of_slack=$biases" --grid transport.name=safs,dctcp-prio,pfabric-edf,dctcp-llf
sweep "$out/urgent-first" "$scenario" "${standard[@]}" "${metric[@]}" --transport safs \
  --set transport.safs.urgent_first=true --grid "timestamps.bias_of_slack=$biases"
sweep "$out/not-told" "$scenario" "${standard[@]}" "${metric[@]}" --transport safs \
  --set timestamps.waiting_updates=false --grid "timestamps.bias_of_slack=$biases"
"$python" - "$out" "$biases" <<'EOF'
import csv, sys
from collections import defaultdict
out, biases = sys.argv[1], sys.argv[2].split(",")
value = defaultdict(list)  # (run, bias as written) -> iteration times (s), one per seed
for row in csv.DictReader(open(f"{out}/baselines/sweep.csv")):
    value[(row["transport.name"], row["timestamps.bias_of_slack"])].append(float(row["compute.iteration_time_s"]))
for name, run in (("urgent-first", "safs, urgent_first"), ("not-told", "safs, waiting not told")):
    for row in csv.DictReader(open(f"{out}/{name}/sweep.csv")):
        value[(run, row["timestamps.bias_of_slack"])].append(float(row["compute.iteration_time_s"]))
runs = ["safs", "safs, waiting not told", "safs, urgent_first", "dctcp-prio", "pfabric-edf", "dctcp-llf"]
def bias_key(b):  # the sweep writes the value as given
    return next(k for (t, k) in value if t == "safs" and float(k) == float(b))
def cell(times):
    ms = [t * 1000 for t in times]
    mean = f"{sum(ms) / len(ms):.3f}"
    return mean if len(ms) == 1 else f"{mean} ({min(ms):.1f}-{max(ms):.1f})"
print("| timestamps late by (slacks) | " + " | ".join(runs) + " |")
print("|---:|" + "---:|" * len(runs))
for b in biases:
    k = bias_key(b)
    print(f"| {b} | " + " | ".join(cell(value[(r, k)]) for r in runs) + " |")
EOF
