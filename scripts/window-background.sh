#!/usr/bin/env bash
# SAFS with its background left to the window underneath
# (transport.safs.grant_background = false) in every cell of the evaluation
# matrix, beside SAFS with its defaults and the best other transport
# (docs/safs.md, "Background under its window"). Runs go to
# out/eval-window-background/LEVEL; scripts/safs-variant.sh says the rest.
#   scripts/window-background.sh [standard|quick|full|ci]   (default standard)
set -euo pipefail
expect_prefix=window-background.sh
# shellcheck source=scripts/expect.sh
source "$(dirname "${BASH_SOURCE[0]}")/expect.sh"
expect_no_more_arguments $# 1 "scripts/window-background.sh [LEVEL]"
exec "$(dirname "${BASH_SOURCE[0]}")/safs-variant.sh" window-background \
  "background under its window" "under its window" "${1:-}" grant_background=false
