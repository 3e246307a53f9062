#!/usr/bin/env bash
# Sets up (packages + Release build) and runs the headline experiment: the
# receiver-incast microbenchmark with every transport (scripts/incast-micro.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
exec "$root/scripts/incast-micro.sh"
