#!/usr/bin/env bash
# SAFS with urgent_over_blind_background (docs/safs.md, "Urgent over blind
# background") in every cell of the evaluation matrix, beside SAFS with its
# defaults and the better static priority class, from a finished
# scripts/versus-priority.sh run of the same level. Prints one markdown
# table on stdout (scripts/versus_priority_table.py's, with the variant's
# columns). Runs go to out/eval-urgent-over-blind/LEVEL, afresh unless
# SAFS_RESUME=1.
#   scripts/urgent-over-blind.sh [standard|quick|full|ci]   (default standard)
# Run scripts/setup.sh first. Environment: scripts/common.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/common.sh
at_most_arguments 1 "$@"
level=$(matrix_level "${1:-}") || exit 2
baseline=out/eval-priority/$level
if [[ ! -f $baseline/matrix.csv ]]; then
  echo "urgent-over-blind: no $baseline/matrix.csv: run scripts/versus-priority.sh $level first" >&2
  exit 2
fi
runs=out/eval-urgent-over-blind/$level
progress "SAFS with urgent_over_blind_background, level $level, into $runs"
fresh "$runs"
status=0
SAFS_SIM=$sim tools/evaluate --level "$level" --transport safs \
  --set transport.safs.urgent_over_blind_background=true --out "$runs" --jobs "$jobs" >&2 ||
  status=$?
((status == 2)) && exit 2
"$python" scripts/versus_priority_table.py "$level" "$baseline" "$runs" \
  "urgent over blind background" || exit $?
exit "$status"
