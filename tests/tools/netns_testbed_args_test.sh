#!/usr/bin/env bash
# scripts/netns-testbed.sh refuses bad arguments with exit 2 and a message
# naming the argument, before it needs root or touches any namespace.
#   tests/tools/netns_testbed_args_test.sh SOURCE_DIR
set -uo pipefail
script=$1/scripts/netns-testbed.sh
failures=0
expect_bad() {  # WHAT MESSAGE ARGS...
  local what=$1 message=$2
  shift 2
  local output code=0
  output=$(bash "$script" "$@" 2>&1) || code=$?
  if [[ $code -eq 2 && $output == *"$message"* ]]; then
    echo "ok: $what"
  else
    echo "FAIL: $what (exit $code): $output"
    failures=$((failures + 1))
  fi
}
expect_bad "rate not a number" "RATE_MBIT = 'x'" x
expect_bad "zero bytes" "BYTES = '0'" 400 0
expect_bad "two slacks" "SLACKS_MS = '1 2': expected three" 400 10 "1 2"
expect_bad "a slack not a number" "SLACKS_MS = 'x'" 400 10 "1 2 x"
expect_bad "negative bulk flows" "BULK = '-1'" 400 10 "1 2 3" -1
expect_bad "QOS not 0 or 1" "QOS = 'yes': expected 0 or 1" 400 10 "1 2 3" 1 yes
exit $((failures > 0))
