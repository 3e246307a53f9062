#!/usr/bin/env bash
# Learned blind caps as a window (transport.safs.blind_cap_as_window) on the
# two evaluation cells where SAFS's control traffic stays above one
# scheduling packet per 100 data packets, afd-shallow and afd-bandwidth-bound:
# SAFS with its defaults, with the cap as a window, with background streams,
# and with both (docs/safs.md, "Blind caps as a window"). Tables and runs as
# scripts/afd-knobs.sh makes them, into out/blind-window/.
set -euo pipefail
expect_prefix=blind-window.sh
# shellcheck source=scripts/expect.sh
source "$(dirname "${BASH_SOURCE[0]}")/expect.sh"
expect_no_more_arguments $# 0 "scripts/blind-window.sh"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec scripts/afd-knobs.sh out/blind-window \
  "safs (defaults)|" \
  "safs, blind cap as a window|blind_cap_as_window=true" \
  "safs, background streams|background_streams=true" \
  "safs, both|blind_cap_as_window=true background_streams=true"
