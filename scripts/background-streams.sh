#!/usr/bin/env bash
# SAFS with background streams (transport.safs.background_streams = true) in
# every cell of the evaluation matrix, beside SAFS with its defaults and the
# best other transport (docs/safs.md, "Background streams"). Runs go to
# out/eval-background-streams/LEVEL; scripts/safs-variant.sh says the rest.
#   scripts/background-streams.sh [standard|quick|full|ci]   (default standard)
set -euo pipefail
if (($# > 1)); then
  echo "background-streams.sh: $# arguments, expected at most one (a level)" >&2
  exit 2
fi
exec "$(dirname "${BASH_SOURCE[0]}")/safs-variant.sh" background-streams \
  "background streams" "streams" "${1:-}" background_streams=true
