#!/usr/bin/env bash
# safs-chakra-gen never replaces trace files that exist without --force, and
# names a directory it cannot write (exit 2 both).
#   tests/tools/chakra_gen_test.sh SAFS_CHAKRA_GEN
set -uo pipefail
gen=$1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/expect_exit2.sh"
"$gen" "$scratch/g" --stages 2 --microbatches 2 || { echo "FAIL: first write"; exit 1; }
echo mine >"$scratch/g.1.et"
expect_exit2 "an existing trace file" "g.0.et exists; choose another prefix, or add --force" \
  "$gen" "$scratch/g" --stages 2 --microbatches 2
[[ $(cat "$scratch/g.1.et") == mine ]] || { echo "FAIL: g.1.et changed"; failures=$((failures + 1)); }
if "$gen" "$scratch/g" --stages 2 --microbatches 2 --force && ! grep -qx mine "$scratch/g.1.et"; then
  echo "ok: --force replaces them"
else
  echo "FAIL: --force did not replace them"
  failures=$((failures + 1))
fi
expect_exit2 "a directory that is not there" "is not a writable directory" \
  "$gen" "$scratch/missing/g" --stages 2
exit $((failures > 0))
