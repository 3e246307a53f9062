#!/usr/bin/env bash
# Grants on ACKs (transport.safs.grant_carrier_wait_us) on the two evaluation
# cells where SAFS's control traffic stays above one scheduling packet per
# 100 data packets, afd-shallow and afd-bandwidth-bound: SAFS with its
# defaults, with a longer control delay alone (which lets decreases wait
# longer), and with grants on ACKs under two waits and control delays
# (docs/safs.md, "Grants on ACKs"). Tables and runs as scripts/afd-knobs.sh
# makes them, into out/grants-on-acks/.
set -euo pipefail
expect_prefix=grants-on-acks.sh
# shellcheck source=scripts/expect.sh
source "$(dirname "${BASH_SOURCE[0]}")/expect.sh"
expect_no_more_arguments $# 0 "scripts/grants-on-acks.sh"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
exec scripts/afd-knobs.sh out/grants-on-acks \
  "safs (defaults)|" \
  "control delay 15 us|control_delay_us=15" \
  "grants on ACKs 6 us, control delay 10 us|grant_carrier_wait_us=6 control_delay_us=10" \
  "grants on ACKs 10 us, control delay 15 us|grant_carrier_wait_us=10 control_delay_us=15"
