#!/usr/bin/env bash
# SAFS with knobs changed on the evaluation matrix's AFD cells that its
# mechanisms are measured on: afd-shallow (16A2F at a full batch, 375 KB
# ports, K = 20, 65 and 100 KB) and afd-bandwidth-bound (32A2F), at the
# matrix's standard level, over four seeds, beside the best other transport
# of each cell in the standard matrix (pFabric on afd-shallow, pfabric-edf
# on 32A2F). Prints two markdown tables on stdout: per variant, mean and 95%
# confidence interval of the p99 TPOT over the seeds, scheduling packets per
# 100 data packets, and the mean drops and timeouts per run. Runs go to OUT
# (a relative one from where the script was started).
#   scripts/afd-knobs.sh OUT "NAME|KEY=VALUE ..." ...
# e.g. scripts/blind-window.sh and scripts/slack-adaptive.sh. Run
# scripts/setup.sh first. Environment: scripts/common.sh.
set -euo pipefail
# OUT as the caller meant it, before the script moves to the project's top.
if [[ -n ${1:-} && $1 != /* && $1 != -* ]]; then set -- "$PWD/$1" "${@:2}"; fi
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/common.sh
if (($# < 2)); then
  echo "usage: scripts/afd-knobs.sh OUT \"NAME|KEY=VALUE ...\" ..." >&2
  exit 2
fi
out=$1
shift
metrics=("${afd_shallow_metrics[@]}" --metric transport_stats.scheduling_packets
  --metric transport_stats.data_packets)
# afd-bandwidth-bound at the standard level (scenarios/eval/matrix.toml).
bandwidth_bound=(--set inference.attention_instances=32 --set inference.prefill_hosts=16
  --set topology.hosts=52 --set inference.warmup_requests=768
  --set inference.measured_requests=192 --set inference.output_tokens_min=4
  --set inference.output_tokens_max=6)

# Every variant is checked before anything is emptied or run: a name, and
# knobs SAFS takes.
for v in "$@"; do
  if [[ $v != *"|"* || -z ${v%%|*} ]]; then
    echo "afd-knobs.sh: variant '$v': expected \"NAME|KEY=VALUE ...\"" >&2
    exit 2
  fi
  safs_sets "${v#*|}"
  expect_scenario "$afd_shallow_scenario" --set transport.name=safs "${sets[@]}"
done
fresh "$out"
shallow_tables=() bound_tables=() runs=0
# run NAME TRANSPORT CELLS ARGS...: one sweep per cell (CELLS: shallow, bound
# or both) into a directory of its own.
run() {
  local name=$1 transport=$2 cells=$3 i=$runs
  shift 3
  runs=$((runs + 1))
  if [[ $cells != bound ]]; then
    afd_shallow_sweep "$out/shallow/$i" "${afd_shallow[@]}" --transport "$transport" "$@" \
      "${metrics[@]}"
    shallow_tables+=("$out/shallow/$i|$name")
  fi
  if [[ $cells != shallow ]]; then
    sweep "$out/bound/$i" "$afd_shallow_scenario" "${bandwidth_bound[@]}" --transport "$transport" \
      "$@" "${metrics[@]}" --grid "simulation.seed=$afd_shallow_seeds"
    bound_tables+=("$out/bound/$i|$name")
  fi
}
for v in "$@"; do
  IFS='|' read -r name knobs <<<"$v"
  safs_sets "$knobs"
  run "$name" safs both "${sets[@]}"
done
run pfabric pfabric shallow
run pfabric-edf pfabric-edf bound

echo "afd-shallow: p99 TPOT (ms, mean ± 95% CI over 4 seeds), scheduling packets per 100 data, drops and timeouts (mean per run):"
echo
"$python" scripts/afd_shallow_table.py by-k control,drops,timeouts "${shallow_tables[@]}"
echo
echo "afd-bandwidth-bound (32A2F), the same columns:"
echo
"$python" scripts/afd_shallow_table.py one control,drops,timeouts "${bound_tables[@]}"
