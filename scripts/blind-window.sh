#!/usr/bin/env bash
# Learned blind caps as a window (transport.safs.blind_cap_as_window) on the
# two evaluation cells where SAFS's control traffic stays above one
# scheduling packet per 100 data packets, afd-shallow and afd-bandwidth-bound:
# SAFS with its defaults, with the cap as a window, with background streams,
# and with both (docs/safs.md, "Blind caps as a window"). Tables and runs as
# scripts/afd-knobs.sh makes them, into out/blind-window/.
set -euo pipefail
if (($# > 0)); then
  echo "blind-window.sh: $# argument(s), expected none" >&2
  exit 2
fi
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec scripts/afd-knobs.sh out/blind-window \
  "safs (defaults)|" \
  "safs, blind cap as a window|blind_cap_as_window=true" \
  "safs, background streams|background_streams=true" \
  "safs, both|blind_cap_as_window=true background_streams=true"
