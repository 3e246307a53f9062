#!/usr/bin/env bash
# Sets up (packages + Release build) and runs the headline experiment: the
# receiver-incast microbenchmark with every transport (scripts/incast-micro.sh).
# Prints on stdout only its table, the one README.md shows; the setup's and
# the runs' progress go to stderr.
set -euo pipefail
expect_prefix=headline.sh
# shellcheck source=scripts/expect.sh
source "$(dirname "${BASH_SOURCE[0]}")/expect.sh"
expect_no_more_arguments $# 0 "scripts/headline.sh"
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh" >&2
exec "$root/scripts/incast-micro.sh"
