#!/usr/bin/env bash
# SAFS with coordinated senders (transport.safs.uplink_by_deadline and
# report_keeps_cap = true) in every cell of the evaluation matrix, beside
# SAFS with its defaults and the best other transport (docs/safs.md,
# "Coordinated senders"). Runs go to out/eval-coordinated-senders/LEVEL;
# scripts/safs-variant.sh says the rest.
#   scripts/coordinated-senders.sh [standard|quick|full|ci]   (default standard)
set -euo pipefail
expect_prefix=coordinated-senders.sh
# shellcheck source=scripts/expect.sh
source "$(dirname "${BASH_SOURCE[0]}")/expect.sh"
expect_no_more_arguments $# 1 "scripts/coordinated-senders.sh [LEVEL]"
exec "$(dirname "${BASH_SOURCE[0]}")/safs-variant.sh" coordinated-senders \
  "coordinated senders" "coordinated" "${1:-}" uplink_by_deadline=true report_keeps_cap=true
