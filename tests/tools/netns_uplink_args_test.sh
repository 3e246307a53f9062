#!/usr/bin/env bash
# scripts/netns-uplink.sh refuses bad arguments with exit 2 and a message
# naming the argument, before it needs root or touches any namespace.
#   tests/tools/netns_uplink_args_test.sh SOURCE_DIR
set -uo pipefail
script=$1/scripts/netns-uplink.sh
source "$(dirname "${BASH_SOURCE[0]}")/expect_exit2.sh"
expect_exit2 "rate not a number" "RATE_MBIT = 'x'" bash "$script" x
expect_exit2 "too few bytes" "BYTES = '10'" bash "$script" 100 10
expect_exit2 "slack not a number" "SLACK_MS = '1.5'" bash "$script" 100 8000000 1.5
expect_exit2 "no rounds" "ROUNDS = '0'" bash "$script" 100 8000000 800 0
exit $((failures > 0))
