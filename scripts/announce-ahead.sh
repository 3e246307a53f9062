#!/usr/bin/env bash
# SAFS with transfers announced ahead (transport.safs.announce_ahead = true)
# in every cell of the evaluation matrix, beside SAFS with its defaults and
# the best other transport (docs/safs.md, "Transfers announced ahead"). Runs
# go to out/eval-announce-ahead/LEVEL; scripts/safs-variant.sh says the rest.
#   scripts/announce-ahead.sh [standard|quick|full|ci]   (default standard)
set -euo pipefail
expect_prefix=announce-ahead.sh
# shellcheck source=scripts/expect.sh
source "$(dirname "${BASH_SOURCE[0]}")/expect.sh"
expect_no_more_arguments $# 1 "scripts/announce-ahead.sh [LEVEL]"
exec "$(dirname "${BASH_SOURCE[0]}")/safs-variant.sh" announce-ahead \
  "transfers announced ahead" "announced ahead" "${1:-}" announce_ahead=true
