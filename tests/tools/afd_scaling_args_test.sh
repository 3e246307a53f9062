#!/usr/bin/env bash
# scripts/afd-scaling.sh refuses a malformed size or an unknown transport
# with exit 2 and a message naming it, before it runs anything (a bad entry
# after a good one included: no run starts, no earlier output is replaced).
#   tests/tools/afd_scaling_args_test.sh SOURCE_DIR
set -uo pipefail
script=$1/scripts/afd-scaling.sh
source "$(dirname "${BASH_SOURCE[0]}")/expect_exit2.sh"
expect_exit2 "a size without F" "SIZES entry '16A'" env SIZES="8A1F 16A" bash "$script"
expect_exit2 "one attention instance" "SIZES entry '1A1F'" env SIZES=1A1F bash "$script"
expect_exit2 "no FFN instance" "SIZES entry '8A0F'" env SIZES=8A0F bash "$script"
expect_exit2 "an unknown transport" "TRANSPORTS entry 'tcp'" env SIZES=8A1F TRANSPORTS="safs tcp" bash "$script"
output=$(SIZES="8A1F 16A" bash "$script" 2>&1)
if [[ $output == *"running "* ]]; then
  echo "FAIL: a bad size after a good one started a run: $output"
  failures=$((failures + 1))
else
  echo "ok: a bad size after a good one starts no run"
fi
output=$(SIZES=8A1F TRANSPORTS="safs tcp" bash "$script" 2>&1)
if [[ $output == *"running "* ]]; then
  echo "FAIL: a bad transport after a good one started a run: $output"
  failures=$((failures + 1))
else
  echo "ok: a bad transport after a good one starts no run"
fi
exit $((failures > 0))
