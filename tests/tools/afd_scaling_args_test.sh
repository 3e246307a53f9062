#!/usr/bin/env bash
# scripts/afd-scaling.sh refuses a malformed size or an unknown transport
# with exit 2 and a message naming it, before it runs anything (a bad entry
# after a good one included: no run starts, no earlier output is replaced).
#   tests/tools/afd_scaling_args_test.sh SOURCE_DIR
set -uo pipefail
script=$1/scripts/afd-scaling.sh
failures=0
# expect_refused WHAT MESSAGE ENV...: with ENV set, the script exits 2 with
# MESSAGE in its output, and no run has started.
expect_refused() {
  local what=$1 message=$2 output code=0
  shift 2
  output=$(env "$@" bash "$script" 2>&1) || code=$?
  if [[ $code -eq 2 && $output == *"$message"* && $output != *"running "* ]]; then
    echo "ok: $what"
  else
    echo "FAIL: $what (exit $code; expected 2, '$message' and no run): $output"
    failures=$((failures + 1))
  fi
}
expect_refused "a bad size after a good one" "SIZES entry '16A'" SIZES="8A1F 16A"
expect_refused "one attention instance" "SIZES entry '1A1F'" SIZES=1A1F
expect_refused "no FFN instance" "SIZES entry '8A0F'" SIZES=8A0F
expect_refused "a bad transport after a good one" "TRANSPORTS entry 'tcp'" SIZES=8A1F TRANSPORTS="safs tcp"
exit $((failures > 0))
