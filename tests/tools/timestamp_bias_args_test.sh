#!/usr/bin/env bash
# scripts/timestamp-bias.sh refuses a SEEDS that is not a list of run seeds
# with exit 2 and a message naming it, before it runs anything.
#   tests/tools/timestamp_bias_args_test.sh SOURCE_DIR
set -uo pipefail
script=$1/scripts/timestamp-bias.sh
source "$(dirname "${BASH_SOURCE[0]}")/expect_exit2.sh"
SEEDS="1 2" expect_exit2 "seeds with spaces" "SEEDS '1 2'" bash "$script"
SEEDS=-1 expect_exit2 "a negative seed" "SEEDS '-1'" bash "$script"
SEEDS=1,01 expect_exit2 "a seed twice" "SEEDS '1,01'" bash "$script"
SEEDS=99999999999999999999 expect_exit2 "a seed past int64" "SEEDS '99999999999999999999'" bash "$script"
exit $((failures > 0))
