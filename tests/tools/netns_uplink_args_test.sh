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
expect_exit2 "a slack past what the runtime takes" "SLACK_MS = '99999999999999999999': expected at most" \
  bash "$script" 100 8000000 99999999999999999999
expect_exit2 "a fifth argument" "5 arguments, expected at most 4" bash "$script" 100 8000000 800 1 x
# Its roles' arguments (scripts/uplink_testbed.py), before any endpoint starts.
roles=$1/scripts/uplink_testbed.py
expect_exit2 "a flow without its slack" "'1.2.3.4:7:1': expected HOST:PORT:TAG:SLACK_MS" \
  python3 "$roles" send --listen 127.0.0.1 --bytes 10 --flow 1.2.3.4:7:1
expect_exit2 "a negative slack" "a slack of 0 (background) or more ms" \
  python3 "$roles" send --listen 127.0.0.1 --bytes 10 --flow 1.2.3.4:7:1:-5
expect_exit2 "a listen address without a port" "'127.0.0.1': expected HOST:PORT" \
  python3 "$roles" recv --listen 127.0.0.1 --downlink-mbit 100 --messages 1 --bytes 10
exit $((failures > 0))
