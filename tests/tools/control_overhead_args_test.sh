#!/usr/bin/env bash
# scripts/control-overhead.sh refuses an unknown level with exit 2 and a
# message naming it, before it reads anything.
#   tests/tools/control_overhead_args_test.sh SOURCE_DIR
set -uo pipefail
script=$1/scripts/control-overhead.sh
source "$(dirname "${BASH_SOURCE[0]}")/expect_exit2.sh"
expect_exit2 "an unknown level" "level 'fast'" bash "$script" fast
exit $((failures > 0))
