#!/usr/bin/env bash
# The attention-FFN disaggregation experiment (16A2F): p50 and p99 TPOT for
# every transport, with the background traffic of scenarios/paper/afd-16a2f.toml
# and without it (the contention-free reference), plus the compute-only bound
# (an infinitely fast network). Writes out/afd-16a2f/<transport>[-nobg]/,
# out/afd-16a2f/results.csv, and prints one markdown table.
# Run scripts/setup.sh first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
sim=${SAFS_SIM:-build/bin/safs-sim}
scenario=${1:-scenarios/paper/afd-16a2f.toml}
out=out/afd-16a2f
mkdir -p "$out"
metric() {  # the value of one summary metric of one run
  "$sim" compare "$1" --metric "$2" | tail -1 | awk -F'|' '{gsub(/ /, "", $4); print $4}'
}
no_background=(--set inference.kv_load=0 --set inference.bulk_load=0)
"$sim" run "$scenario" --set inference.free_communication=true --out "$out/compute-only" --quiet
echo "transport,tpot_p50_ms,tpot_p99_ms,step_mean_ms,late_transfer_fraction,nobg_tpot_p50_ms,nobg_tpot_p99_ms" >"$out/results.csv"
printf '| transport | p50 TPOT ms | p99 TPOT ms | mean step ms | late transfers | p50 / p99 without background |\n|---|---:|---:|---:|---:|---:|\n'
for transport in $("$sim" transports | awk '{print $1}'); do
  "$sim" run "$scenario" --transport "$transport" --out "$out/$transport" --quiet
  "$sim" run "$scenario" --transport "$transport" "${no_background[@]}" --out "$out/$transport-nobg" --quiet
  d="$out/$transport" n="$out/$transport-nobg"
  p50=$(metric "$d" inference.tpot_p50_ms) p99=$(metric "$d" inference.tpot_p99_ms)
  step=$(metric "$d" inference.step_mean_ms) late=$(metric "$d" inference.transfers.late_fraction)
  n50=$(metric "$n" inference.tpot_p50_ms) n99=$(metric "$n" inference.tpot_p99_ms)
  echo "$transport,$p50,$p99,$step,$late,$n50,$n99" >>"$out/results.csv"
  echo "| $transport | $p50 | $p99 | $step | $late | $n50 / $n99 |"
done
c="$out/compute-only"
echo
echo "Compute-only bound (free communication): p50 $(metric "$c" inference.tpot_p50_ms) ms, p99 $(metric "$c" inference.tpot_p99_ms) ms, mean step $(metric "$c" inference.step_mean_ms) ms."
