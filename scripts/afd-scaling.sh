#!/usr/bin/env bash
# How the cost of attention-FFN inference grows with its size, per transport:
# scenarios/paper/afd-16a2f.toml at nA mF sizes (attention instances, FFN
# instances; prefill hosts half the attention instances, bulk hosts one per
# 16 attention instances and at least the file's two, so that each bulk
# host's load stays within its link), each run alone, one after another (wall time and peak memory are
# what this measures). Prints one markdown table on stdout (simulated time,
# events, wall, events per second, peak RSS); progress on stderr.
#   SIZES       sizes to run (default "8A1F 16A2F 32A4F"; 64A8F takes about
#               20 minutes per transport)
#   TRANSPORTS  transports (default "dctcp safs")
# Outputs go to out/afd-scaling/<size>-<transport>/. Run scripts/setup.sh first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/common.sh
at_most_arguments 0 "$@"
afd=scenarios/paper/afd-16a2f.toml
sizes=${SIZES:-8A1F 16A2F 32A4F}
transports=${TRANSPORTS:-dctcp safs}
# Every size and transport is checked before anything runs, so a bad entry
# late in the list costs no run and overwrites no earlier output.
shapes=()  # "attention ffn" per size
# n and m at most 4096, as [inference] takes them; digits read as decimal
# (08 is 8), four at most, so no arithmetic wraps.
for size in $sizes; do
  if [[ ! $size =~ ^0*([0-9]{1,4})A0*([0-9]{1,4})F$ ]] ||
    ((10#${BASH_REMATCH[1]} < 2 || 10#${BASH_REMATCH[1]} > 4096 ||
      10#${BASH_REMATCH[2]} < 1 || 10#${BASH_REMATCH[2]} > 4096)); then
    echo "afd-scaling: SIZES entry '$size': expected nAmF with 2 <= n <= 4096 and 1 <= m <= 4096 (16A2F)" >&2
    exit 2
  fi
  shapes+=("$((10#${BASH_REMATCH[1]})) $((10#${BASH_REMATCH[2]}))")
done
if ((${#shapes[@]} == 0)); then
  echo "afd-scaling: SIZES = '$sizes': expected one or more sizes (16A2F)" >&2
  exit 2
fi
known=$("$sim" transports | awk '{print $1}')
for t in $transports; do
  if ! grep -qx -- "$t" <<<"$known"; then
    echo "afd-scaling: TRANSPORTS entry '$t' is not a transport (safs-sim transports)" >&2
    exit 2
  fi
done
dirs=()
for shape in "${shapes[@]}"; do
  read -r a f <<<"$shape"
  size=${a}A${f}F
  prefill=$((a / 2))
  bulk=$((a / 16 > 2 ? a / 16 : 2))
  for t in $transports; do
    dir=out/afd-scaling/$size-$t
    run_one "$dir" "$afd" --transport "$t" --set inference.attention_instances="$a" \
      --set inference.ffn_instances="$f" --set inference.prefill_hosts="$prefill" \
      --set inference.bulk_hosts="$bulk" --set topology.hosts=$((a + f + prefill + bulk))
    dirs+=("$dir")
  done
done
"$sim" compare "${dirs[@]}" \
  --metric "simulated_s:simulated (s)" --metric "events:events" --metric "run_wall_s:wall (s)" \
  --metric "events_per_s:M events/s:0.000001" --metric "peak_rss_mib:peak RSS (MiB)"
