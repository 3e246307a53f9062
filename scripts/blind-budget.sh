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
at_most_arguments 0 "$@"
out=out/blind-budget
scenario=$afd_shallow_scenario
seeds=$afd_shallow_seeds
shallow=("${afd_shallow[@]}")
metrics=("${afd_shallow_metrics[@]}")

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

by_k=() one=()
for t in "${tables[@]}"; do
  if [[ $t == k\|* ]]; then by_k+=("${t#k|}"); else one+=("${t#growth|}"); fi
done
echo "p99 TPOT (ms, mean ± 95% CI over 4 seeds), drops and timeouts (mean per run):"
echo
"$python" scripts/afd_shallow_table.py by-k drops,timeouts "${by_k[@]}"
echo
echo "At K = 100 KB, how fast the learned cap grows back:"
echo
"$python" scripts/afd_shallow_table.py one drops,timeouts "${one[@]}"
