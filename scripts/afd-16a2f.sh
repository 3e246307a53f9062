#!/usr/bin/env bash
# The attention-FFN disaggregation experiment (16A2F): p50 and p99 TPOT for
# every transport, with the background traffic of scenarios/paper/afd-16a2f.toml
# (a sweep into out/afd-16a2f/background/) and without it (the
# contention-free reference, out/afd-16a2f/no-background/), plus the
# compute-only bound (an infinitely fast network, out/afd-16a2f/compute-only).
# Writes out/afd-16a2f/results.csv and prints one markdown table on stdout;
# progress on stderr. Run scripts/setup.sh first. Environment: scripts/common.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/common.sh
at_most_arguments 1 "$@"
scenario=${1:-scenarios/paper/afd-16a2f.toml}
expect_scenario "$scenario"
out=out/afd-16a2f
grid=(--grid "transport.name=$(transports | joined)")
fresh "$out"
sweep "$out/background" "$scenario" "${grid[@]}"
sweep "$out/no-background" "$scenario" "${grid[@]}" \
  --set inference.kv_load=0 --set inference.bulk_load=0
run_one "$out/compute-only" "$scenario" --set inference.free_communication=true
echo "transport,tpot_p50_ms,tpot_p99_ms,step_mean_ms,late_transfer_fraction,nobg_tpot_p50_ms,nobg_tpot_p99_ms" >"$out/results.csv"
printf '| transport | p50 TPOT ms | p99 TPOT ms | mean step ms | late transfers | p50 / p99 without background |\n|---|---:|---:|---:|---:|---:|\n'
for transport in $(transports); do
  d="$out/background/transport=$transport" n="$out/no-background/transport=$transport"
  p50=$(metric "$d" inference.tpot_p50_ms) p99=$(metric "$d" inference.tpot_p99_ms)
  step=$(metric "$d" inference.step_mean_ms) late=$(metric "$d" inference.transfers.late_fraction)
  n50=$(metric "$n" inference.tpot_p50_ms) n99=$(metric "$n" inference.tpot_p99_ms)
  echo "$transport,$p50,$p99,$step,$late,$n50,$n99" >>"$out/results.csv"
  echo "| $transport | $p50 | $p99 | $step | $late | $n50 / $n99 |"
done
c="$out/compute-only"
echo
echo "Compute-only bound (free communication): p50 $(metric "$c" inference.tpot_p50_ms) ms, p99 $(metric "$c" inference.tpot_p99_ms) ms, mean step $(metric "$c" inference.step_mean_ms) ms."
