#!/usr/bin/env bash
# The receiver-incast microbenchmark (scenarios/micro/incast.toml) with every
# transport, then one comparison table. Run scripts/setup.sh first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dirs=()
for transport in $(${SAFS_SIM:-build/bin/safs-sim} transports | awk '{print $1}'); do
  ${SAFS_SIM:-build/bin/safs-sim} run scenarios/micro/incast.toml --transport "$transport" \
    --out "out/incast-micro/$transport" --quiet
  dirs+=("out/incast-micro/$transport")
done
# SAFS with urgent flows served first (EDF at line rate) instead of just in time.
${SAFS_SIM:-build/bin/safs-sim} run scenarios/micro/incast.toml --transport safs \
  --set transport.safs.urgent_first=1 --out out/incast-micro/safs-urgent-first --quiet
dirs+=(out/incast-micro/safs-urgent-first)
${SAFS_SIM:-build/bin/safs-sim} compare "${dirs[@]}"
