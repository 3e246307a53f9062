#!/usr/bin/env bash
# Tail loss probes (transport.NAME.tail_loss_probe, RFC 8985 section 7) on
# afd-shallow, the evaluation matrix's 16A2F at a full batch with 375 KB
# ports, at its standard level, over four seeds: every window transport of
# the matrix with probes off (the default) and on, beside pFabric and Homa
# (which have their own loss recovery), at K = 20, 65 and 100 KB. Prints a
# markdown table on stdout (docs/safs.md, "Lost blind bytes"): mean and 95%
# confidence interval of the p99 TPOT over the seeds, and the mean drops,
# timeouts and resent packets per run. Runs go to out/tail-loss/. Run
# scripts/setup.sh first. Environment: scripts/common.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/common.sh
at_most_arguments 0 "$@"
out=out/tail-loss

# name|transport|probes (on, off, or - for a transport without the knob)
variants=(
  "safs|safs|off"
  "safs, tail loss probes|safs|on"
  "dctcp|dctcp|off"
  "dctcp, tail loss probes|dctcp|on"
  "dctcp-prio|dctcp-prio|off"
  "dctcp-prio, tail loss probes|dctcp-prio|on"
  "d2tcp|d2tcp|off"
  "d2tcp, tail loss probes|d2tcp|on"
  "pfabric|pfabric|-"
  "homa|homa|-"
)

fresh "$out"
tables=()
i=0
for v in "${variants[@]}"; do
  IFS='|' read -r name transport probes <<<"$v"
  knob=()
  [[ $probes == - ]] || knob=(--set "transport.$transport.tail_loss_probe=$([[ $probes == on ]] && echo true || echo false)")
  afd_shallow_sweep "$out/$i" "${afd_shallow[@]}" --transport "$transport" "${knob[@]}" \
    "${afd_shallow_metrics[@]}"
  tables+=("$out/$i|$name")
  i=$((i + 1))
done

echo "p99 TPOT (ms, mean ± 95% CI over 4 seeds); drops, timeouts and resent packets (mean per run):"
echo
"$python" scripts/afd_shallow_table.py by-k drops,timeouts,resent "${tables[@]}"
