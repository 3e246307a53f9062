#!/usr/bin/env bash
# scripts/netns-testbed.sh refuses bad arguments with exit 2 and a message
# naming the argument, before it needs root or touches any namespace.
#   tests/tools/netns_testbed_args_test.sh SOURCE_DIR
set -uo pipefail
script=$1/scripts/netns-testbed.sh
source "$(dirname "${BASH_SOURCE[0]}")/expect_exit2.sh"
expect_exit2 "rate not a number" "RATE_MBIT = 'x'" bash "$script" x
expect_exit2 "zero bytes" "BYTES = '0'" bash "$script" 400 0
expect_exit2 "two slacks" "SLACKS_MS = '1 2': expected three" bash "$script" 400 10 "1 2"
expect_exit2 "a slack not a number" "SLACKS_MS = 'x'" bash "$script" 400 10 "1 2 x"
expect_exit2 "negative bulk flows" "BULK = '-1'" bash "$script" 400 10 "1 2 3" -1
expect_exit2 "bulk flows it would not start" "BULK = '3': expected 0 or 1" bash "$script" 400 10 "1 2 3" 3
expect_exit2 "a rate past what tc takes" "RATE_MBIT = '99999999999999999999': expected at most" \
  bash "$script" 99999999999999999999
expect_exit2 "a message past safs-rt's 1 GiB" "BYTES = '2000000000': expected at most" \
  bash "$script" 400 2000000000
expect_exit2 "a slack past safs-rt's" "SLACKS_MS = '99999999999': expected at most" \
  bash "$script" 400 10 "1 2 99999999999"
expect_exit2 "a sixth argument" "6 arguments, expected at most 5" bash "$script" 400 10 "1 2 3" 1 0 x
expect_exit2 "SAFS_RT not a binary" "SAFS_RT = '/': expected an executable safs-rt" \
  env SAFS_RT=/ bash "$script"
expect_exit2 "QOS not 0 or 1" "QOS = 'yes': expected 0 or 1" bash "$script" 400 10 "1 2 3" 1 yes
expect_exit2 "an unknown congestion control" "CC = 'vegas-ng': expected one of what this host allows" \
  env CC=vegas-ng bash "$script"
expect_exit2 "idle restart not 0 or 1" "TCP_IDLE_RESTART = '2': expected 0 or 1" \
  env TCP_IDLE_RESTART=2 bash "$script"
expect_exit2 "a queue of no bytes" "QUEUE_KB = '0': expected 1 to 999999 KB" env QUEUE_KB=0 bash "$script"
expect_exit2 "a queue past a 32-bit byte count" "QUEUE_KB = '9999999'" env QUEUE_KB=9999999 bash "$script"
exit $((failures > 0))
