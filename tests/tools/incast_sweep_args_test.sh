#!/usr/bin/env bash
# bench/incast_sweep's bad arguments: each ends with exit 2 and a message
# naming the argument, before any run and before the table's header.
#   tests/tools/incast_sweep_args_test.sh INCAST_SWEEP
set -uo pipefail
sweep=$1
fail() {
  echo "FAIL: $*"
  exit 1
}
expect_bad() {  # expected message part, arguments...
  local want=$1 out err status
  shift
  err=$(mktemp)
  out=$("$sweep" "$@" 2>"$err")
  status=$?
  [[ $status == 2 ]] || fail "$*: exit $status, expected 2"
  [[ -z $out ]] || fail "$*: printed on stdout: $out"
  grep -qF -- "$want" "$err" || fail "$*: message '$(cat "$err")' lacks '$want'"
  rm -f "$err"
}
expect_bad "unknown transport 'nosuch'" nosuch
expect_bad "expected param=value, got 'usable_fraction'" safs usable_fraction
expect_bad "no_such_knob=1: safs has no such key" safs no_such_knob=1
expect_bad "urgent_first=maybe: expected true, false or a number" safs urgent_first=maybe
expect_bad "usable_fraction=7: expected 0.1 .. 1" safs usable_fraction=7
echo "incast_sweep: every bad argument exits 2 with a message"
