#!/usr/bin/env bash
# The runtime's uplink reports on real sockets between network namespaces
# (docs/runtime.md, "Uplink reports"). Sender s has one uplink of RATE_MBIT
# (htb on its own egress: its NIC) and sends two flows at once: an urgent
# one to receiver r1, due SLACK_MS after it starts, and a background one to
# receiver r2. Sender t sends a background flow to r2 as well. Each
# receiver's downlink is RATE_MBIT (htb on the bridge's port into it). The
# urgent flow needs most of s's uplink to be on time; r1 grants it that,
# and r2 grants s's background flow half of r2's downlink, which s's uplink
# cannot also carry.
#
#   scripts/netns-uplink.sh [RATE_MBIT=100] [BYTES=8000000] [SLACK_MS=800] [ROUNDS=3]
#
# Each round runs s with its uplink unknown (the default: each flow paced at
# its grant, no reports) and then told (EndpointConfig::uplink: its flows
# share the uplink in deadline order, and r2 is told what s's background
# flow can get). Prints one line per run and a table. Needs root and
# network namespaces (skips without them); uses only 198.18.0.0/15; removes
# everything it made on exit.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rate_mbit=${1:-100}
bytes=${2:-8000000}
slack_ms=${3:-800}
rounds=${4:-3}
python=/usr/bin/python3  # Debian's, with its packages
[[ -x $python ]] || python=python3

expect_prefix=netns-uplink
# shellcheck source=scripts/expect.sh
source "$root/scripts/expect.sh"
expect_no_more_arguments $# 4 "scripts/netns-uplink.sh [RATE_MBIT] [BYTES] [SLACK_MS] [ROUNDS]"
expect RATE_MBIT "$rate_mbit" '^[1-9][0-9]*$' "a positive whole number of Mbit/s"
expect_at_most RATE_MBIT "$rate_mbit" 100000 "at most 100000 Mbit/s"
expect BYTES "$bytes" '^[1-9][0-9]{5,8}$' "a whole number of bytes, 100000 to 999999999"
expect SLACK_MS "$slack_ms" '^[1-9][0-9]*$' "positive whole ms"
expect_at_most SLACK_MS "$slack_ms" 1000000000 "at most 1000000000 ms"
expect ROUNDS "$rounds" '^[1-9][0-9]?$' "1 to 99 rounds"

prefix=safsul
# shellcheck source=scripts/netns.sh
source "$root/scripts/netns.sh"
netns_require "the uplink testbed" "$prefix"
if ! PYTHONPATH=$root/build/python $python -c 'import safs.runtime' 2>/dev/null; then
  echo "netns-uplink: needs the safs module (run scripts/setup.sh first)" >&2
  exit 1
fi
netns_claim "$prefix"
hosts=(s t r1 r2)
declare -A address=([s]=198.18.0.11 [t]=198.18.0.12 [r1]=198.18.0.1 [r2]=198.18.0.2)
out=$(mktemp -d)
netns_job_key "$out/job.key"
cleanup() {
  netns_remove "$prefix" "${hosts[@]}"
  rm -rf "$out"
}
trap cleanup EXIT

netns_star "$prefix" s="${address[s]}" t="${address[t]}" r1="${address[r1]}" r2="${address[r2]}"
# htb at the rate, a 64 KB bucket (veth offloads build 64 KB packets, and
# a smaller bucket stalls them), a 1000-packet FIFO.
shape() {  # NAMESPACE DEVICE
  ip netns exec "$prefix-$1" tc qdisc add dev "$2" root handle 1: htb default 1
  ip netns exec "$prefix-$1" tc class add dev "$2" parent 1: classid 1:1 htb rate "${rate_mbit}mbit" \
    burst 64k cburst 64k
  ip netns exec "$prefix-$1" tc qdisc add dev "$2" parent 1:1 handle 10: pfifo limit 1000
}
shape s eth-s     # s's uplink
shape sw sw-r1    # the receivers' downlinks
shape sw sw-r2

role() {  # NAMESPACE ARGS...
  local ns=$1
  shift
  ip netns exec "$prefix-$ns" env PYTHONPATH="$root/build/python" timeout 120 \
    $python "$root/scripts/uplink_testbed.py" "$@"
}

run() {  # ROUND UPLINK_MBIT
  local name="$1.uplink-$2" pids=() i
  role r1 recv --listen "${address[r1]}:7001" --downlink-mbit "$rate_mbit" --messages 1 \
    --bytes "$bytes" --ready "$out/$name.r1.ready" >"$out/$name.r1" &
  pids+=($!)
  role r2 recv --listen "${address[r2]}:7002" --downlink-mbit "$rate_mbit" --messages 2 \
    --bytes "$bytes" --ready "$out/$name.r2.ready" >"$out/$name.r2" &
  pids+=($!)
  for ((i = 0; i < 100; i++)); do  # both listen before anyone sends (10 s at most)
    [[ -e $out/$name.r1.ready && -e $out/$name.r2.ready ]] && break
    sleep 0.1
  done
  role s send --listen "${address[s]}" --uplink-mbit "$2" --bytes "$bytes" \
    --flow "${address[r1]}:7001:1:$slack_ms" --flow "${address[r2]}:7002:1:0" >"$out/$name.s" &
  pids+=($!)
  role t send --listen "${address[t]}" --bytes "$bytes" \
    --flow "${address[r2]}:7002:2:0" >"$out/$name.t" &
  pids+=($!)
  for pid in "${pids[@]}"; do wait "$pid" || { echo "netns-uplink: a role of $name failed" >&2; exit 1; }; done
  echo "netns-uplink: $name done" >&2
}

echo "uplink and downlinks ${rate_mbit} Mbit/s; s: ${bytes} B urgent to r1 due in ${slack_ms} ms" \
  "and ${bytes} B background to r2; t: ${bytes} B background to r2; ${rounds} round(s)"
for ((round = 1; round <= rounds; round++)); do
  run "$round" 0
  run "$round" "$rate_mbit"
done
$python "$root/scripts/uplink_testbed.py" table "$out"
