#!/usr/bin/env bash
# Sets up (packages + Release build) and runs the headline experiment: a
# 16-to-1 receiver incast of 4 MiB flows at 100 Gbit/s, with every transport.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup.sh"
cd "$root"
for transport in $(build/bin/safs-sim transports | awk '{print $1}'); do
  build/bin/safs-sim run scenarios/examples/incast.toml --transport "$transport" \
    --out "out/incast-$transport"
done
