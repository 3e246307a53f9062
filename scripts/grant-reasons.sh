#!/usr/bin/env bash
# Where SAFS's control traffic goes: SAFS with
# transport.safs.report_grant_reasons = true (and any other SAFS knobs given)
# in every cell of the evaluation matrix, and per cell (means per run over
# its seeds) the scheduling packets per 100 data packets and the share of
# them that were grants to urgent and to background flows, by reason: a
# flow's first grant, a rate up or down, a new priority, a rate again after
# a pause or a lapsed lease, a lease refreshed (docs/safs.md, "Where the
# control goes").
# Needs no other run. Runs go to out/eval-grant-reasons/LEVEL (with the
# knobs, out/eval-grant-reasons/LEVEL-KNOB=VALUE,...), afresh unless
# SAFS_RESUME=1; prints one markdown table on stdout. A cell that fails is
# left out and the exit status is 1.
#   scripts/grant-reasons.sh [standard|quick|full|ci [KNOB=VALUE...]]
#   e.g. scripts/grant-reasons.sh standard background_streams=true
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/common.sh
level=$(matrix_level "${1:-}") || exit 2
shift $(($# > 0 ? 1 : 0))
overrides=(--set transport.safs.report_grant_reasons=true)
for knob in "$@"; do
  [[ $knob =~ ^[a-z_]+=[^,/[:space:]]+$ ]] || {
    echo "grant-reasons.sh: '$knob': expected a SAFS knob as KNOB=VALUE (e.g. background_streams=true)" >&2
    exit 2
  }
  [[ $knob != report_grant_reasons=* ]] || {
    echo "grant-reasons.sh: '$knob': report_grant_reasons is this script's own (always true)" >&2
    exit 2
  }
  overrides+=(--set "transport.safs.$knob")
done
# The settings, before anything is emptied or run.
expect_scenario scenarios/examples/incast.toml --set transport.name=safs "${overrides[@]}"
runs=out/eval-grant-reasons/$level
if (($# > 0)); then runs+=-$(IFS=,; echo "$*"); fi
progress "SAFS with report_grant_reasons=true${*:+ $*}, level $level, into $runs"
safs_matrix "$runs" "$level" "${overrides[@]}"
"$python" scripts/mechanism_table.py grants "$runs" || exit $?
exit "$matrix_status"
