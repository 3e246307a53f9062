#!/usr/bin/env bash
# The quick start prints the README's table: scripts/incast-micro.sh (what
# scripts/headline.sh runs after the build) writes to stdout exactly the
# markdown table of README.md's "Headline experiment" section, byte for byte.
# Runs in a copy of scripts/ and scenarios/, so the source tree's out/ stays
# untouched. Usage: headline_test.sh SAFS_SIM SOURCE_DIR
set -euo pipefail
sim=$1 source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r "$source_dir/scripts" "$source_dir/scenarios" "$work/"
# The first block of table lines after the section's heading.
awk '/^## Headline experiment/ { in_section = 1; next }
     in_section && /^## / { exit }
     in_section && /^\|/ { print; printed = 1; next }
     in_section && printed { exit }' "$source_dir/README.md" >"$work/readme-table.md"
if [[ ! -s $work/readme-table.md ]]; then
  echo "FAILED: no table in README.md's \"Headline experiment\" section"
  exit 1
fi
SAFS_SIM=$sim SAFS_JOBS=2 "$work/scripts/incast-micro.sh" >"$work/printed.md" 2>"$work/stderr.txt" || {
  echo "FAILED: scripts/incast-micro.sh exited with an error:"
  cat "$work/stderr.txt"
  exit 1
}
if cmp -s "$work/readme-table.md" "$work/printed.md"; then
  echo "ok: scripts/incast-micro.sh prints README.md's headline table"
else
  echo "FAILED: README.md's headline table (-) differs from what scripts/incast-micro.sh prints (+):"
  diff -u "$work/readme-table.md" "$work/printed.md" || true
  exit 1
fi
