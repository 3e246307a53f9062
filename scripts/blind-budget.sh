#!/usr/bin/env bash
# Learned blind caps (transport.safs.learn_blind_budget) on afd-shallow, the
# evaluation matrix's 16A2F at a full batch with 375 KB ports, at its standard
# level, over four seeds: SAFS with and without them beside pFabric and Homa
# at K = 20, 65 and 100 KB, then how fast the cap grows back
# (blind_budget_growth_us) at K = 100 KB. Prints two markdown tables on
# stdout (docs/safs.md, "Sender side"): mean and 95% confidence interval of
# the p99 TPOT over the seeds, and the mean drops and timeouts per run. Runs
# go to out/blind-budget/. Run scripts/setup.sh first. Environment:
# scripts/common.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/common.sh
out=out/blind-budget
scenario=scenarios/eval/afd-saturated.toml
seeds=1,2,3,4
# afd-shallow's port buffer and the standard level's run length
# (scenarios/eval/matrix.toml).
shallow=(--set network.port_buffer_bytes=375000 --set inference.output_tokens_min=4
  --set inference.output_tokens_max=6 --set inference.measured_requests=96)
metrics=(--metric inference.tpot_p99_ms --metric network.queue_drops
  --metric transport_stats.timeouts)

# name|overrides: one sweep over K and the seeds each.
variants=(
  "safs (learned blind caps, the default)|--transport safs"
  "safs, fixed blind budget (learn_blind_budget = false)|--transport safs --set transport.safs.learn_blind_budget=false"
  "pfabric|--transport pfabric"
  "homa|--transport homa"
)
# name|overrides: at K = 100 KB only.
growth=(
  "grows a packet per 1 ms|--set transport.safs.blind_budget_growth_us=1000"
  "grows a packet per 10 ms|--set transport.safs.blind_budget_growth_us=10000"
  "grows a packet per 100 ms (the default)|"
  "never grows back|--set transport.safs.blind_budget_growth_us=0"
)

fresh "$out"
tables=()
i=0
for v in "${variants[@]}"; do
  IFS='|' read -r name overrides <<<"$v"
  # shellcheck disable=SC2086 # overrides are words
  sweep "$out/k/$i" "$scenario" "${shallow[@]}" $overrides "${metrics[@]}" \
    --grid network.ecn_threshold_bytes=20000,65000,100000 --grid "simulation.seed=$seeds"
  tables+=("k|$out/k/$i|$name")
  i=$((i + 1))
done
i=0
for v in "${growth[@]}"; do
  IFS='|' read -r name overrides <<<"$v"
  # shellcheck disable=SC2086 # overrides are words
  sweep "$out/growth/$i" "$scenario" "${shallow[@]}" --transport safs $overrides "${metrics[@]}" \
    --set network.ecn_threshold_bytes=100000 --grid "simulation.seed=$seeds"
  tables+=("growth|$out/growth/$i|$name")
  i=$((i + 1))
done

"$python" - "${tables[@]}" <<'EOF'
import csv, importlib.machinery, statistics, sys

# tools/evaluate's mean and 95% confidence interval (Student's t), not a copy.
evaluate = importlib.machinery.SourceFileLoader("evaluate", "tools/evaluate").load_module()

def mean_ci(values):
    mean, ci = evaluate.mean_ci(values)
    return mean, ci or 0.0

def rows(path):
    with open(path + "/sweep.csv") as f:
        return list(csv.DictReader(f))

def cell(points):
    tpot, ci = mean_ci([float(p["inference.tpot_p99_ms"]) for p in points])
    drops = statistics.fmean(float(p["network.queue_drops"]) for p in points)
    timeouts = statistics.fmean(float(p["transport_stats.timeouts"]) for p in points)
    return f"{tpot:.3f} ± {ci:.3f} | {drops:,.0f} | {timeouts:,.0f}"

by_k = [e.split("|", 2) for e in sys.argv[1:] if e.startswith("k|")]
ks = ["20000", "65000", "100000"]
print("p99 TPOT (ms, mean ± 95% CI over 4 seeds), drops and timeouts (mean per run):\n")
print("| run | " + " | ".join(f"K = {int(k) // 1000} KB | drops | timeouts" for k in ks) + " |")
print("|---|" + "---:|---:|---:|" * len(ks))
for _, path, name in by_k:
    points = rows(path)
    cells = [cell([p for p in points if p["network.ecn_threshold_bytes"] == k]) for k in ks]
    print(f"| {name} | " + " | ".join(cells) + " |")
print("\nAt K = 100 KB, how fast the learned cap grows back:\n")
print("| run | p99 TPOT (ms) | drops | timeouts |")
print("|---|---:|---:|---:|")
for kind, path, name in (e.split("|", 2) for e in sys.argv[1:]):
    if kind == "growth":
        print(f"| {name} | {cell(rows(path))} |")
EOF
