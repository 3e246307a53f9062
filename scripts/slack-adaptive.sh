#!/usr/bin/env bash
# Slack-adaptive service (transport.safs.slack_adaptive: an urgent flow with
# little slack, or within one bandwidth-delay product of its end, goes at
# line rate in service order; one with ample slack is paced just in time)
# beside SAFS's defaults (just in time for every flow) and urgent_first (line
# rate for every flow), on (1) the receiver-incast microbenchmark, (2)
# zb-comm-bound at 80% web search at the matrix's standard level over three
# seeds, and (3) the AFD cells of scripts/afd-knobs.sh. Prints markdown
# tables on stdout (docs/safs.md, "Slack-adaptive service"). Runs go to
# out/slack-adaptive/. Run scripts/setup.sh first. Environment:
# scripts/common.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/common.sh
at_most_arguments 0 "$@"
out=out/slack-adaptive
variants=(
  "safs (defaults: just in time)|"
  "safs, slack-adaptive|slack_adaptive=true"
  "safs, urgent first|urgent_first=true"
)
fresh "$out"

dirs=() zb_tables=()
i=0
for v in "${variants[@]}"; do
  IFS='|' read -r name knobs <<<"$v"
  safs_sets "$knobs"
  run_one "$out/incast/$i" scenarios/micro/incast.toml --transport safs "${sets[@]}"
  dirs+=("$out/incast/$i")
  sweep "$out/zb/$i" scenarios/eval/zb-comm-bound.toml --transport safs "${sets[@]}" \
    --set pipeline.microbatches=4 --set 'poisson[0].load=0.8' \
    --metric compute.iteration_time_s --metric network.queue_drops \
    --metric transport_stats.timeouts --metric transport_stats.scheduling_packets \
    --metric transport_stats.data_packets --grid simulation.seed=1,2,3
  zb_tables+=("$out/zb/$i|$name")
  i=$((i + 1))
done

echo "Receiver-incast microbenchmark:"
echo
for i in "${!variants[@]}"; do echo "- ${dirs[$i]}: ${variants[$i]%%|*}"; done
echo
"$sim" compare "${dirs[@]}"
echo
echo "zb-comm-bound, web search 80%: iteration (ms, mean ± 95% CI over 3 seeds), scheduling packets per 100 data, drops and timeouts (mean per run):"
echo
"$python" scripts/afd_shallow_table.py --metric "compute.iteration_time_s:iteration (ms):1000" \
  one control,drops,timeouts "${zb_tables[@]}"
echo
scripts/afd-knobs.sh "$out/afd" "${variants[@]}"
