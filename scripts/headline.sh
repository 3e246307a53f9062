#!/usr/bin/env bash
# Sets up (packages + Release build) and runs the headline experiment: the
# receiver-incast microbenchmark with every transport (scripts/incast-micro.sh).
# Prints on stdout only its table, the one README.md shows; the setup's and
# the runs' progress go to stderr.
set -euo pipefail
if (($# > 0)); then
  echo "headline.sh: $# argument(s), expected none" >&2
  exit 2
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh" >&2
exec "$root/scripts/incast-micro.sh"
