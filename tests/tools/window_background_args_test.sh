#!/usr/bin/env bash
# scripts/window-background.sh refuses an unknown level with exit 2 and a
# message naming it, before it runs anything.
#   tests/tools/window_background_args_test.sh SOURCE_DIR
set -uo pipefail
script=$1/scripts/window-background.sh
source "$(dirname "${BASH_SOURCE[0]}")/expect_exit2.sh"
expect_exit2 "an unknown level" "level 'fast'" bash "$script" fast
exit $((failures > 0))
