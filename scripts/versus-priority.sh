#!/usr/bin/env bash
# SAFS against the static priority class, the strongest simple baseline, in
# every cell of the evaluation matrix: SAFS, `dctcp-prio` and `d2tcp-prio`
# (the pipeline's or inference job's transfers in a strict-priority class
# above background; docs/transports.md). Prints one markdown table on
# stdout: per cell, SAFS's and the better priority class's mean and 95%
# confidence interval over the seeds, their ratio (or difference, for
# counts), on how many seeds SAFS was better, level or worse (the same seed
# runs the same workload under each transport), the matrix's verdict (best,
# within 2%, worse) and whether the two intervals leave each other
# (docs/evaluation.md, "SAFS against the static priority class").
# Runs go to out/eval-priority/LEVEL, afresh unless SAFS_RESUME=1.
#   scripts/versus-priority.sh [standard|quick|full|ci]   (default standard)
# About 30 minutes at the standard level on 2 cores. Run scripts/setup.sh
# first. Environment: scripts/common.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/common.sh
at_most_arguments 1 "$@"
level=$(matrix_level "${1:-}") || exit 2
runs=out/eval-priority/$level
progress "SAFS, dctcp-prio and d2tcp-prio, level $level, into $runs"
fresh "$runs"
status=0
SAFS_SIM=$sim tools/evaluate --level "$level" --transport safs --transport dctcp-prio \
  --transport d2tcp-prio --out "$runs" --jobs "$jobs" >&2 || status=$?
# 2: bad input, nothing ran; 1: some cell failed, the table leaves it out.
((status == 2)) && exit 2
"$python" scripts/versus_priority_table.py "$level" "$runs" || exit $?
exit "$status"
