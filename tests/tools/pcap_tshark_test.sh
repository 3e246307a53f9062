#!/usr/bin/env bash
# tshark reads a capture of `safs-sim run --pcap` without complaint, and
# tools/safs-sim.lua decodes every frame's SFS1 header: one data frame per
# data packet the run sent (skipped, exit 77, without tshark).
# Usage: pcap_tshark_test.sh SAFS_SIM SOURCE_DIR
set -euo pipefail
sim=$1 source_dir=$2
if ! command -v tshark >/dev/null; then
  echo "skipped: tshark is missing (Debian package tshark)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
check() {
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; failures=$((failures + 1)); fi
}
for transport in safs homa; do
  "$sim" run "$source_dir/scenarios/examples/incast.toml" --quiet --transport "$transport" \
    --out "$work/$transport" --pcap 'switch->host0' "$work/$transport.pcap"
  data=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["transport_stats"]["data_packets"])' \
    "$work/$transport/summary.json")
  tshark=(tshark -n -X "lua_script:$source_dir/tools/safs-sim.lua" -r "$work/$transport.pcap")
  "${tshark[@]}" -T fields -e frame.number -e safs.kind -e _ws.malformed >"$work/fields.txt" 2>"$work/err.txt"
  check "$transport: tshark reads it" test ! -s "$work/err.txt" -o -z "$(grep -v 'Running as user' "$work/err.txt")"
  check "$transport: every frame decoded" test "$(awk -F'\t' '$2 == ""' "$work/fields.txt" | wc -l)" -eq 0
  check "$transport: no malformed frame" test "$(awk -F'\t' '$3 != ""' "$work/fields.txt" | wc -l)" -eq 0
  check "$transport: one data frame per data packet ($data)" \
    test "$(awk -F'\t' '$2 == 0' "$work/fields.txt" | wc -l)" -eq "$data"
done
((failures == 0))
