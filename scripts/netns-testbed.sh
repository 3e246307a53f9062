#!/usr/bin/env bash
# A one-machine testbed for the SAFS runtime: network namespaces r (receiver),
# s1..s3 (senders) and sw (a bridge), joined by veth pairs; htb on sw's egress
# toward r is the bottleneck. Three SAFS senders with staggered deadlines and
# one unmanaged bulk TCP flow share it; then the same three transfers go over
# plain TCP next to the same bulk flow. Prints each transfer and the misses.
#
# Needs root and network namespaces (skips without them); uses only
# 198.18.0.0/15; removes everything it made on exit.
#
#   scripts/netns-testbed.sh [RATE_MBIT=400] [BYTES=15000000] [SLACKS_MS="700 1100 1500"] [BULK=1] [QOS=0]
#
# BULK=0 leaves the unmanaged flow out. SAFS_RT picks the safs-rt binary
# (default: the build tree's). A transfer that fails (its sender exits
# non-zero) counts as a miss and is named, the receiver is then given 10 s
# to finish before it is stopped, and the script exits 1 at its end. QOS=1 configures the bottleneck as an
# operator configures switch QoS for SAFS (the deployment requirement for
# protection from unmanaged traffic, docs/runtime.md): htb with a
# high-priority class (90% of the rate guaranteed, may borrow all of it, first
# to borrow) for packets carrying SAFS's DSCP marks (AF11, AF21, AF41-43, EF:
# runtime::dscp_for_priority) and a default class (10% guaranteed, may borrow
# the rest) for everything else, each with its own FIFO. RECV_FLAGS adds
# flags to the SAFS receivers (e.g. --no-edf-when-short, --adapt-budget),
# SEND_FLAGS to the SAFS senders (e.g. --no-contention-fallback). CC sets
# every host's TCP congestion control, the bulk flow's included (one this
# host allows in namespaces; default: the host's, which a new namespace
# inherits); the one in effect is printed either way. TCP_IDLE_RESTART
# sets every host's net.ipv4.tcp_slow_start_after_idle (0 or 1; default:
# the host's), printed either way too. QUEUE_KB sets the bottleneck's FIFOs
# in kilobytes (bfifo, as a switch port's buffer counts them; default 1000
# packets, pfifo, up to 64 MB of the veths' 64 KB GSO packets).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tool=${SAFS_RT:-$root/build/bin/safs-rt}
rate_mbit=${1:-400}
bytes=${2:-15000000}
read -r -a slacks <<<"${3:-700 1100 1500}"
bulk_flows=${4:-1}
qos=${5:-0}
read -r -a recv_extra <<<"${RECV_FLAGS:-}"
read -r -a send_extra <<<"${SEND_FLAGS:-}"
cc=${CC:-}
idle_restart=${TCP_IDLE_RESTART:-}
queue_kb=${QUEUE_KB:-}

# Bad arguments end here, before anything needs root: the argument, its
# value and what was expected, exit 2.
expect_prefix=netns-testbed
# shellcheck source=scripts/expect.sh
source "$root/scripts/expect.sh"
expect_no_more_arguments $# 5 "scripts/netns-testbed.sh [RATE_MBIT] [BYTES] [SLACKS_MS] [BULK] [QOS]"
# The bounds are safs-rt's (a message is at most 1 GiB, a slack at most
# 10^9 ms) and tc's (a rate it takes; 100 Gbit/s is beyond any veth here).
expect RATE_MBIT "$rate_mbit" '^[1-9][0-9]*$' "a positive whole number of Mbit/s"
expect_at_most RATE_MBIT "$rate_mbit" 100000 "at most 100000 Mbit/s"
expect BYTES "$bytes" '^[1-9][0-9]*$' "a positive whole number of bytes"
expect_at_most BYTES "$bytes" 1073741824 "at most 1073741824 bytes (1 GiB)"
((${#slacks[@]} == 3)) || expect SLACKS_MS "${3:-}" '^$' "three slacks in ms"
for slack in "${slacks[@]}"; do
  expect SLACKS_MS "$slack" '^[1-9][0-9]*$' "positive whole ms"
  expect_at_most SLACKS_MS "$slack" 1000000000 "at most 1000000000 ms each"
done
expect BULK "$bulk_flows" '^[01]$' "0 or 1 (the unmanaged bulk flow, or none)"
expect QOS "$qos" '^[01]$' "0 or 1"
expect TCP_IDLE_RESTART "$idle_restart" '^[01]?$' "0 or 1 (unset: the host's)"
if [[ -n ${SAFS_RT:-} && ! ( -f $tool && -x $tool ) ]]; then
  echo "netns-testbed: SAFS_RT = '$tool': expected an executable safs-rt" >&2
  exit 2
fi

prefix=safstb
# shellcheck source=scripts/netns.sh
source "$root/scripts/netns.sh"
netns_expect_congestion_control "$cc"
netns_expect_fifo "$queue_kb"
netns_require "the namespace testbed" "$prefix"
if [[ ! -x $tool ]]; then echo "build safs-rt first (cmake --build build --target safs-rt)" >&2; exit 1; fi
netns_claim "$prefix"
hosts=(r s1 s2 s3)
declare -A address=([r]=198.18.0.1 [s1]=198.18.0.11 [s2]=198.18.0.12 [s3]=198.18.0.13)
out=$(mktemp -d)
netns_job_key "$out/job.key"  # the one every endpoint of the run shares
cleanup() {
  netns_remove "$prefix" "${hosts[@]}"
  rm -rf "$out"
}
trap cleanup EXIT

netns_star "$prefix" r="${address[r]}" s1="${address[s1]}" s2="${address[s2]}" s3="${address[s3]}"
netns_tcp_setting "$prefix" tcp_congestion_control "$cc" "TCP congestion control" "${hosts[@]}"
netns_tcp_setting "$prefix" tcp_slow_start_after_idle "$idle_restart" "TCP restart after idle" \
  "${hosts[@]}"
# The bottleneck: sw -> r. veth offloads build 64 KB packets (GSO), so the
# bucket must hold at least one or htb stalls them. Each class has a FIFO
# of QUEUE_KB (netns_fifo).
sw_tc() { ip netns exec "$prefix-sw" tc "$@"; }
read -r -a fifo <<<"$(netns_fifo "$queue_kb")"
if ((qos == 0)); then
  sw_tc qdisc add dev sw-r root handle 1: htb default 1
  sw_tc class add dev sw-r parent 1: classid 1:1 htb rate "${rate_mbit}mbit" burst 64k cburst 64k
  sw_tc qdisc add dev sw-r parent 1:1 handle 10: "${fifo[@]}"
else
  sw_tc qdisc add dev sw-r root handle 1: htb default 20
  sw_tc class add dev sw-r parent 1: classid 1:1 htb rate "${rate_mbit}mbit" burst 64k cburst 64k
  sw_tc class add dev sw-r parent 1:1 classid 1:10 htb rate "$((rate_mbit * 900))kbit" \
    ceil "${rate_mbit}mbit" prio 0 burst 64k cburst 64k
  sw_tc class add dev sw-r parent 1:1 classid 1:20 htb rate "$((rate_mbit * 100))kbit" \
    ceil "${rate_mbit}mbit" prio 1 burst 64k cburst 64k
  sw_tc qdisc add dev sw-r parent 1:10 handle 10: "${fifo[@]}"
  sw_tc qdisc add dev sw-r parent 1:20 handle 20: "${fifo[@]}"
  # SAFS's DSCPs (AF11 10, AF21 18, AF43 38, AF42 36, AF41 34, EF 46) as the
  # TOS byte (DSCP << 2; the ECN bits masked off).
  for tos in 0x28 0x48 0x98 0x90 0x88 0xb8; do
    sw_tc filter add dev sw-r parent 1: protocol ip prio 1 u32 match ip tos "$tos" 0xfc flowid 1:10
  done
fi

in_ns() { local ns=$1; shift; ip netns exec "$prefix-$ns" "$@"; }
any_failed=0

run_phase() {  # $1: safs | safs-urgent-first | plain
  local mode=$1 flag="" recv_flag="" port=7000
  [[ $mode == plain ]] && flag=--plain && recv_flag=--plain && port=7200
  [[ $mode == safs-urgent-first ]] && recv_flag=--urgent-first && port=7300
  in_ns r "$tool" recv --plain --listen 198.18.0.1:7100 --count -1 >/dev/null &
  local extra=() sender_extra=()
  [[ $mode != plain ]] && extra=("${recv_extra[@]}") && sender_extra=("${send_extra[@]}")
  in_ns r "$tool" recv $recv_flag "${extra[@]}" --listen "198.18.0.1:$port" --downlink-mbps "$rate_mbit" \
    --count 3 >"$out/$mode-recv.txt" &
  local receiver=$!
  sleep 0.3
  local bulk=""
  if ((bulk_flows > 0)); then
    in_ns s3 "$tool" bulk --to 198.18.0.1:7100 &
    bulk=$!
    sleep 1  # the bulk flow fills the bottleneck first
  fi
  local senders=() failed=()
  for i in 1 2 3; do
    in_ns "s$i" "$tool" send $flag "${sender_extra[@]}" --to "198.18.0.1:$port" --bytes "$bytes" \
      --slack-ms "${slacks[$((i - 1))]}" --tag "$i" --listen "${address[s$i]}:0" \
      >"$out/$mode-send-$i.txt" 2>"$out/$mode-send-$i.err" &
    senders+=($!)
  done
  local i status
  for i in 1 2 3; do
    status=0
    wait "${senders[$((i - 1))]}" || status=$?
    if ((status != 0)); then
      failed+=("$i")
      any_failed=1
      echo "$mode: transfer $i failed (safs-rt send, exit $status): $(tail -n 1 "$out/$mode-send-$i.err")"
    fi
  done
  # The receiver ends after its three messages; one that never came (a
  # failed sender) must not hold the run.
  for _ in $(seq 100); do kill -0 "$receiver" 2>/dev/null || break; sleep 0.1; done
  kill "$receiver" 2>/dev/null || true
  wait "$receiver" || true
  if [[ -n $bulk ]]; then
    kill "$bulk" 2>/dev/null || true
    wait "$bulk" 2>/dev/null || true
  fi
  ip netns pids "$prefix-r" | xargs -r kill 2>/dev/null || true
  cat "$out"/$mode-send-*.err >&2  # the senders' log lines (warnings), as before
  cat "$out"/$mode-send-*.txt
  local misses
  misses=$(cat "$out"/$mode-send-*.txt | grep -c 'met=0' || true)
  # A failed transfer met nothing, whatever it printed.
  for i in "${failed[@]}"; do
    grep -q 'met=0' "$out/$mode-send-$i.txt" || misses=$((misses + 1))
  done
  echo "$mode: deadline misses $misses of 3${failed[*]:+ (failed: ${failed[*]})}"
  if [[ $mode != plain ]]; then
    grep -h recv-summary "$out/$mode-recv.txt" || true
    # Every byte intact: the receiver's checksum of each message is the sender's.
    local tag sent got
    for tag in 1 2 3; do
      [[ " ${failed[*]} " == *" $tag "* ]] && continue  # named above
      sent=$(grep -ho 'checksum=[0-9a-f]*' "$out/$mode-send-$tag.txt" | head -1 || true)
      got=$(grep -h "recv tag=$tag " "$out/$mode-recv.txt" | grep -o 'checksum=[0-9a-f]*' || true)
      [[ -n $sent && $sent == "$got" ]] || echo "$mode: CHECKSUM MISMATCH for tag $tag ($sent vs $got)"
    done
  fi
}

echo "bottleneck ${rate_mbit} Mbit/s (htb$( ((qos)) && echo ", SAFS DSCPs in a priority class"), FIFO ${fifo[*]}), 3 x ${bytes} B with slack ${slacks[*]} ms, ${bulk_flows} bulk TCP flow(s)${RECV_FLAGS:+, receivers $RECV_FLAGS}${SEND_FLAGS:+, senders $SEND_FLAGS}"
run_phase safs
sleep 1
run_phase safs-urgent-first
sleep 1
run_phase plain
if ((qos)); then  # what each class carried: SAFS's marks must land in 1:10
  sw_tc -s class show dev sw-r | grep -A1 -E "class htb 1:(10|20)" | grep -E "class|Sent" || true
fi
if ((any_failed)); then
  echo "netns-testbed: some transfers failed (above)" >&2
  exit 1
fi
