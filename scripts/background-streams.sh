#!/usr/bin/env bash
# SAFS with background streams (transport.safs.background_streams = true) in
# every cell of the evaluation matrix, beside SAFS with its defaults and the
# best other transport (docs/safs.md, "Background streams"). Runs go to
# out/eval-background-streams/LEVEL; scripts/safs-variant.sh says the rest.
#   scripts/background-streams.sh [standard|quick|full|ci]   (default standard)
set -euo pipefail
expect_prefix=background-streams.sh
# shellcheck source=scripts/expect.sh
source "$(dirname "${BASH_SOURCE[0]}")/expect.sh"
expect_no_more_arguments $# 1 "scripts/background-streams.sh [LEVEL]"
exec "$(dirname "${BASH_SOURCE[0]}")/safs-variant.sh" background-streams \
  "background streams" "streams" "${1:-}" background_streams=true
