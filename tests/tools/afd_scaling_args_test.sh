#!/usr/bin/env bash
# scripts/afd-scaling.sh refuses a malformed size or an unknown transport
# with exit 2 and a message naming it, before it runs anything (a bad entry
# after a good one included: no run starts, no earlier output is replaced).
#   tests/tools/afd_scaling_args_test.sh SOURCE_DIR
set -uo pipefail
script=$1/scripts/afd-scaling.sh
source "$(dirname "${BASH_SOURCE[0]}")/expect_exit2.sh"
# expect_refused WHAT MESSAGE ENV...: with ENV set, the script exits 2 with
# MESSAGE in its output, and no run has started.
expect_refused() {
  expect_exit2_without "running " "$1" "$2" env "${@:3}" bash "$script"
}
expect_refused "a bad size after a good one" "SIZES entry '16A'" SIZES="8A1F 16A"
expect_refused "one attention instance" "SIZES entry '1A1F'" SIZES=1A1F
expect_refused "no FFN instance" "SIZES entry '8A0F'" SIZES=8A0F
expect_refused "a bad transport after a good one" "TRANSPORTS entry 'tcp'" SIZES=8A1F TRANSPORTS="safs tcp"
expect_refused "more attention instances than [inference] takes" "SIZES entry '5000A1F'" SIZES="8A1F 5000A1F"
expect_refused "a size that would wrap around" "SIZES entry '99999999999999999999A1F'" \
  SIZES=99999999999999999999A1F
expect_refused "a leading zero read as decimal, then a bad size" "SIZES entry '1A1F'" SIZES="08A1F 1A1F"
expect_refused "no size at all" "SIZES = ' ': expected one or more" SIZES=" "
exit $((failures > 0))
