#!/usr/bin/env bash
# The experiment scripts' environment and arguments (scripts/common.sh) are
# checked before anything runs or is emptied: a bad SAFS_RESUME, SAFS_JOBS,
# SAFS_SIM or SAFS_TRANSPORTS (or check-identical's SAFS_CHECK_IGNORE), an
# argument too many, a bad variant or setting, an output directory that looks like an option or holds the
# user's files (under the project's out/ too) end with exit 2 and a message
# naming it. A relative output directory is the caller's, not the project's.
#   tests/tools/script_environment_test.sh SAFS_SIM SOURCE_DIR
set -uo pipefail
export SAFS_SIM=$1
script=$2/scripts/timestamp-bias.sh
source "$(dirname "${BASH_SOURCE[0]}")/expect_exit2.sh"
mine=$2/out/safs-test-users-own-$$
elsewhere=$(mktemp -d)
trap 'rm -rf "$mine" "$elsewhere"' EXIT
SAFS_RESUME=yes expect_exit2 "resume not 0 or 1" "SAFS_RESUME = 'yes': expected 1" bash "$script"
SAFS_JOBS=abc expect_exit2 "jobs not a number" "SAFS_JOBS = 'abc': expected a number" bash "$script"
SAFS_JOBS=0 expect_exit2 "no jobs" "SAFS_JOBS = '0'" bash "$script"
SAFS_TRANSPORTS=dctcp,nope expect_exit2 "an unknown transport" \
  "SAFS_TRANSPORTS = 'dctcp,nope': expected transports of" bash "$script"
SAFS_TRANSPORTS=safs, expect_exit2 "a trailing comma" "SAFS_TRANSPORTS = 'safs,'" bash "$script"
SAFS_TRANSPORTS=safs,safs expect_exit2 "a transport twice" "expected each transport once" bash "$script"
SAFS_TRANSPORTS=safs expect_exit2 "figures without dctcp" "expected a list with dctcp safs" \
  bash "$2/scripts/figures.sh"
SAFS_SIM=/nonexistent expect_exit2 "no simulator" "SAFS_SIM = '/nonexistent'" bash "$script"
expect_exit2 "an argument too many" "1 argument(s) (--bogus), expected at most 0" bash "$script" --bogus
expect_exit2 "an output directory like an option" "output directory '-x'" \
  bash "$2/scripts/afd-knobs.sh" -x "a|"
expect_exit2 "a variant without a name" "variant 'nobar'" bash "$2/scripts/afd-knobs.sh" /tmp/x nobar
expect_exit2 "a knob SAFS does not have" "bogus=1: unknown key" \
  bash "$2/scripts/afd-knobs.sh" /tmp/x "bad|bogus=1"
mkdir -p "$mine" && echo mine >"$mine/notes.txt"
expect_exit2 "the user's directory under out/" "holds files no safs script wrote" \
  bash "$2/scripts/afd-knobs.sh" "$mine" "a|"
[[ $(cat "$mine/notes.txt") == mine ]] || { echo "FAIL: notes.txt changed"; failures=$((failures + 1)); }
: >"$elsewhere/results"
cd "$elsewhere" || exit 1
expect_exit2 "a relative OUT: the caller's file, not the project's" \
  "$elsewhere/results exists and is not a directory" bash "$2/scripts/afd-knobs.sh" results "a|"
cd "$2" || exit 1
SAFS_CHECK_IGNORE='events;rm' expect_exit2 "check-identical: a bad key list" \
  "SAFS_CHECK_IGNORE: expected summary.json keys separated by commas, got 'events;rm'" \
  bash scripts/check-identical.sh record "$elsewhere/ident"
[[ ! -e $elsewhere/ident ]] || {
  echo "FAIL: check-identical wrote $elsewhere/ident before refusing"
  failures=$((failures + 1))
}
exit $((failures > 0))
