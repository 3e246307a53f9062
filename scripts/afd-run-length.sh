#!/usr/bin/env bash
# Does the standard level's short run weigh SAFS's start-up cost on
# afd-shallow? SAFS (its defaults, and with learned blind caps as a window:
# docs/safs.md, "Blind caps as a window") and pFabric (the best other
# transport there) at the standard run length (outputs of 4-6 tokens: 11
# decode steps measured) and four times it (16-24 tokens: 48-51 steps), K = 20,
# 65 and 100 KB, four seeds each (docs/evaluation.md, "The quick level
# against the standard one"). Prints one table per length on stdout (p99
# TPOT mean and 95% confidence interval, scheduling packets per 100 data,
# drops and timeouts per run); runs go to out/afd-run-length/. About 15
# minutes on 2 cores. Run scripts/setup.sh first. Environment:
# scripts/common.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/common.sh
at_most_arguments 0 "$@"
out=out/afd-run-length
fresh "$out"
# afd_shallow (common.sh) without its output lengths, which vary here.
base=(--set network.port_buffer_bytes=375000 --set inference.measured_requests=96)
metrics=("${afd_shallow_metrics[@]}" --metric transport_stats.scheduling_packets
  --metric transport_stats.data_packets)
for length in "standard|4|6" "four times|16|24"; do
  IFS='|' read -r name min_tokens max_tokens <<<"$length"
  dir="$out/${min_tokens}-${max_tokens}"
  tables=()
  for variant in "safs|safs|" "safs-window|safs|blind_cap_as_window=true" "pfabric|pfabric|"; do
    IFS='|' read -r label transport knobs <<<"$variant"
    safs_sets "$knobs"
    afd_shallow_sweep "$dir/$label" "${base[@]}" --transport "$transport" \
      --set "inference.output_tokens_min=$min_tokens" \
      --set "inference.output_tokens_max=$max_tokens" "${sets[@]}" "${metrics[@]}"
    tables+=("$dir/$label|$label")
  done
  echo "afd-shallow, $name run length (outputs of $min_tokens-$max_tokens tokens): p99 TPOT (ms, mean ± 95% CI over 4 seeds), scheduling packets per 100 data, drops and timeouts (mean per run):"
  echo
  "$python" scripts/afd_shallow_table.py by-k control,drops,timeouts "${tables[@]}"
  echo
done
