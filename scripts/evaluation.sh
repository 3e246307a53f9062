#!/usr/bin/env bash
# Regenerates docs/evaluation.md's matrix and its figures from a run of the
# evaluation matrix at one level (default standard, the one docs/evaluation.md
# reports; quick for a look in 10 minutes, full for the calibrated runs):
#   scripts/evaluation.sh [standard|quick|full]
# Runs go to out/eval/LEVEL (finished points are reused: the sweeps'
# resume); the report is spliced between the markers of docs/evaluation.md;
# one figure per scenario family goes to docs/figures/eval-FAMILY.png.
# Environment: SAFS_SIM (default build/bin/safs-sim), SAFS_JOBS (cells at
# once, default: the cores).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
expect_prefix=evaluation.sh
# shellcheck source=scripts/expect.sh
source "$(dirname "${BASH_SOURCE[0]}")/expect.sh"
expect_no_more_arguments $# 1 "scripts/evaluation.sh [LEVEL]"
level=${1:-standard}
if [[ ! ${SAFS_JOBS:-1} =~ ^[1-9][0-9]{0,3}$ ]]; then
  echo "evaluation.sh: SAFS_JOBS = '$SAFS_JOBS': expected a number of cells at once, 1 to 9999" >&2
  exit 2
fi
sim=${SAFS_SIM:-build/bin/safs-sim}
out=out/eval/$level
start=$(date +%s)
status=0
SAFS_SIM=$sim tools/evaluate --level "$level" --out "$out" --jobs "${SAFS_JOBS:-$(nproc)}" \
  --report docs/evaluation.md || status=$?
((status != 2)) || exit 2  # bad input, named by evaluate; nothing ran
echo "evaluation: level $level in $(($(date +%s) - start)) s" >&2
for family in training inference fabric incast; do
  tools/plot matrix "$out/matrix.csv" --family "$family" --force -o "docs/figures/eval-$family.png" ||
    echo "evaluation: no figure for $family (no finished cell)" >&2
done
exit "$status"
