#!/usr/bin/env bash
# The experiment scripts' environment (scripts/common.sh) is checked before
# anything runs or is emptied: a bad SAFS_RESUME, SAFS_JOBS or
# SAFS_TRANSPORTS ends with exit 2 and a message naming it.
#   tests/tools/script_environment_test.sh SAFS_SIM SOURCE_DIR
set -uo pipefail
export SAFS_SIM=$1
script=$2/scripts/timestamp-bias.sh
source "$(dirname "${BASH_SOURCE[0]}")/expect_exit2.sh"
SAFS_RESUME=yes expect_exit2 "resume not 0 or 1" "SAFS_RESUME = 'yes': expected 1" bash "$script"
SAFS_JOBS=abc expect_exit2 "jobs not a number" "SAFS_JOBS = 'abc': expected a number" bash "$script"
SAFS_JOBS=0 expect_exit2 "no jobs" "SAFS_JOBS = '0'" bash "$script"
SAFS_TRANSPORTS=dctcp,nope expect_exit2 "an unknown transport" \
  "SAFS_TRANSPORTS = 'dctcp,nope': expected transports of" bash "$script"
exit $((failures > 0))
