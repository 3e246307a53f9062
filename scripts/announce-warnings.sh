#!/usr/bin/env bash
# What receivers make of transfers announced ahead: SAFS with
# transport.safs.announce_ahead = true in every cell of the evaluation
# matrix, and per cell (means per run over its seeds) the announcements, the
# share the receiver warned of as infeasible, the share given up (their flow
# never came), the share of announced transfers that started under their
# plan, and the urgent flows that missed their timestamps (docs/safs.md,
# "Transfers announced ahead"). Needs no other run. Runs go to
# out/eval-announce-warnings/LEVEL, afresh unless SAFS_RESUME=1; prints one
# markdown table on stdout. A cell that fails is left out and the exit
# status is 1.
#   scripts/announce-warnings.sh [standard|quick|full|ci]   (default standard)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/common.sh
at_most_arguments 1 "$@"
level=$(matrix_level "${1:-}") || exit 2
runs=out/eval-announce-warnings/$level
progress "SAFS with announce_ahead=true, level $level, into $runs"
safs_matrix "$runs" "$level" --set transport.safs.announce_ahead=true
"$python" scripts/mechanism_table.py announcements "$runs" || exit $?
exit "$matrix_status"
