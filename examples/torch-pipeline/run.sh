#!/usr/bin/env bash
# A real pipeline job over SAFS and over gloo, each stage a process in its
# own network namespace behind an htb bottleneck, with and without an
# unmanaged bulk TCP flow into every stage; writes the table of
# docs/real-pipeline.md and the sim-to-real check (to_scenario.py).
#
#   examples/torch-pipeline/run.sh [OUT_DIR]   (root; after scripts/setup.sh)
#   examples/torch-pipeline/run.sh --help
#
# Environment: RATE_MBIT (bottleneck into each stage, default 200), GSO (1:
# the veths' 64 KB GSO packets; 0: every host sends wire-sized packets, as a
# switch port sees them, which costs this 2-vCPU machine's compute dearly
# next to a competitor), BURST_KB (the bottleneck's htb burst, what it
# passes at once after an idle spell: 64; 4 with GSO=0), UNPACED_CONNECTIONS
# (1: SAFS's unpaced sends on a contended path take a data connection the
# kernel never paced; 0: they may reuse one it did), STAGES
# (2), MICROBATCHES (8), ITERATIONS (measured per run, 3), RUNS (runs per
# cell, in rounds, 1), SCHEDULES ("gpipe 1f1b zb-h1"), COMMS ("safs gloo-preposted
# gloo"; also safs-fresh, SAFS with a new data connection per tensor,
# safs-paced, SAFS with its contention fallback off, safs-asap, SAFS with
# every send due at once, safs-ahead, SAFS with each send announced
# ahead, safs-edf, SAFS's receivers serving every urgent send EDF at
# line rate, safs-parallel, SAFS with sends started together on a
# contended path each on a connection of its own, and safs-ownrate, SAFS
# judging an unpaced send for risk by its own windows only), CC (the hosts' TCP congestion control, one the host allows in
# namespaces, net.ipv4.tcp_allowed_congestion_control; default: what new
# namespaces inherit from the host; recorded in each run's output either way),
# TCP_IDLE_RESTART (every host's net.ipv4.tcp_slow_start_after_idle: 1, a
# connection idle for longer than its retransmission timeout starts its
# window over; 0, it keeps it; default: the host's; recorded either way),
# QUEUE_KB (the bottleneck's FIFO in kilobytes, bfifo, as a switch port's
# buffer counts them; default: 1000 packets, pfifo, which with 64 KB GSO
# packets holds up to 64 MB, 2.6 s at 200 Mbit/s; recorded either way),
# TCP_SAMPLES (1: each stage's TCP connections, `ss -tin` every 100 ms, in
# NAME.tcp.txt per run: windows, RTTs, retransmissions; default 0),
# COMPETITION ("none background bulk bulk-qos": no competitor;
# background into each stage on the job's transport (SAFS background flows
# into the stage's own endpoint for safs, TCP for gloo); one unmanaged bulk
# TCP flow into each stage through one FIFO; the same with the job's
# traffic in a QoS class of its own). Only 198.18.0.0/15; a trap removes the
# namespaces. Skips (exit 0, with a message) without root or namespaces.
set -euo pipefail
# `wait -n -p` (the first stage to fail ends a cell) is bash 5.1's.
if ((BASH_VERSINFO[0] < 5 || (BASH_VERSINFO[0] == 5 && BASH_VERSINFO[1] < 1))); then
  echo "torch-pipeline: needs bash 5.1 or later (this is $BASH_VERSION)" >&2
  exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi
out=${1:-$root/out/torch-pipeline}
rate_mbit=${RATE_MBIT:-200}
gso=${GSO:-1}
burst_kb=${BURST_KB:-64}
unpaced_connections=${UNPACED_CONNECTIONS:-1}
stages=${STAGES:-2}
microbatches=${MICROBATCHES:-8}
iterations=${ITERATIONS:-3}
runs=${RUNS:-1}
read -r -a schedule_list <<<"${SCHEDULES:-gpipe 1f1b zb-h1}"
read -r -a comm_list <<<"${COMMS:-safs gloo-preposted gloo}"
read -r -a competition_list <<<"${COMPETITION:-none background bulk bulk-qos}"
cc=${CC:-}
idle_restart=${TCP_IDLE_RESTART:-}
queue_kb=${QUEUE_KB:-}
tcp_samples=${TCP_SAMPLES:-0}
python=/usr/bin/python3

expect_prefix=torch-pipeline
# shellcheck source=scripts/expect.sh
source "$root/scripts/expect.sh"
expect_no_more_arguments $# 1 "examples/torch-pipeline/run.sh [OUT_DIR]"
expect OUT_DIR "$out" '^[^-]' "a directory (one starting with - as ./-...)"
# The bounds: tc's (a rate and a burst it takes), the pipeline's tags
# (gradients' start at 100000) and what a stage's 300 s limit holds.
expect RATE_MBIT "$rate_mbit" '^[1-9][0-9]*$' "a positive whole number of Mbit/s"
expect_at_most RATE_MBIT "$rate_mbit" 100000 "at most 100000 Mbit/s"
expect GSO "$gso" '^[01]$' "0 or 1"
expect BURST_KB "$burst_kb" '^[1-9][0-9]*$' "a positive whole number of KB"
expect_at_most BURST_KB "$burst_kb" 65536 "at most 65536 KB"
expect UNPACED_CONNECTIONS "$unpaced_connections" '^[01]$' "0 or 1"
expect STAGES "$stages" '^[2-8]$' "2..8 stages"
expect MICROBATCHES "$microbatches" '^[1-9][0-9]*$' "a positive whole number"
expect_at_most MICROBATCHES "$microbatches" 99999 "at most 99999"
expect ITERATIONS "$iterations" '^[1-9][0-9]*$' "a positive whole number"
expect_at_most ITERATIONS "$iterations" 100 "at most 100"
expect RUNS "$runs" '^[1-9][0-9]*$' "a positive whole number"
expect_at_most RUNS "$runs" 100 "at most 100"
((${#comm_list[@]})) || expect COMMS "${COMMS:-}" '^$' "one or more communications"
((${#schedule_list[@]})) || expect SCHEDULES "${SCHEDULES:-}" '^$' "one or more schedules"
((${#competition_list[@]})) || expect COMPETITION "${COMPETITION:-}" '^$' "one or more competitors"
expect TCP_SAMPLES "$tcp_samples" '^[01]$' "0 or 1"
expect TCP_IDLE_RESTART "$idle_restart" '^[01]?$' "0 or 1 (unset: the host's)"
for c in "${comm_list[@]}"; do
  expect COMMS "$c" '^(safs|safs-fresh|safs-paced|safs-asap|safs-ahead|safs-edf|safs-parallel|safs-ownrate|gloo-preposted|gloo)$' \
    "safs, safs-fresh, safs-paced, safs-asap, safs-ahead, safs-edf, safs-parallel, safs-ownrate, gloo-preposted, gloo"
done
for c in "${schedule_list[@]}"; do
  expect SCHEDULES "$c" '^(gpipe|1f1b|zb-h1)$' "gpipe, 1f1b, zb-h1"
done
for c in "${competition_list[@]}"; do
  expect COMPETITION "$c" '^(none|background|bulk|bulk-qos)$' "none, background, bulk, bulk-qos"
done
if [[ -e $out && -n $(ls -A "$out" 2>/dev/null) && ! -e $out/.torch-pipeline ]]; then
  echo "torch-pipeline: $out exists and is not an earlier run's output; not writing into it" >&2
  exit 2
fi

prefix=safspp
# shellcheck source=scripts/netns.sh
source "$root/scripts/netns.sh"
netns_expect_congestion_control "$cc"
netns_expect_fifo "$queue_kb"
netns_require "the torch pipeline testbed" "$prefix"
if ! PYTHONPATH=$root/build/python $python -c 'import torch, safs.torch' 2>/dev/null; then
  echo "torch-pipeline: needs torch and the safs module (run scripts/setup.sh first)" >&2
  exit 1
fi
netns_claim "$prefix"
hosts=(bg)
for ((s = 0; s < stages; s++)); do hosts+=("s$s"); done
address() { [[ $1 == bg ]] && echo 198.18.1.100 || echo "198.18.1.$((10 + ${1#s}))"; }
mkdir -p -- "$out"
rm -f -- "$out"/*.rank*.json "$out"/*.sim.json "$out"/*.sink* "$out"/*.toml "$out"/*.tcp.txt \
  "$out"/table.md  # an earlier run's
touch "$out/.torch-pipeline"
keydir=$(mktemp -d)
sampler=  # the running cell's TCP sampler (TCP_SAMPLES=1), outside the namespaces
cleanup() {
  if [[ -n $sampler ]]; then kill "$sampler" 2>/dev/null || true; fi
  netns_remove "$prefix" "${hosts[@]}"
  rm -rf "$keydir"
}
trap cleanup EXIT
netns_job_key "$keydir/job.key"

star=()
for h in "${hosts[@]}"; do star+=("$h=$(address "$h")"); done
netns_star "$prefix" "${star[@]}"
if [[ $gso == 0 ]]; then
  for h in "${hosts[@]}"; do ip -n "$prefix-$h" link set dev "eth-$h" gso_max_segs 1; done
fi
# Every host's TCP, the bulk competitor's included (each run's output
# records it too: pipeline.py).
netns_tcp_setting "$prefix" tcp_congestion_control "$cc" "TCP congestion control" "${hosts[@]}" >&2
netns_tcp_setting "$prefix" tcp_slow_start_after_idle "$idle_restart" "TCP restart after idle" \
  "${hosts[@]}" >&2
# Processes started in the background are `ip netns exec` itself (it execs
# the command), so that kill reaches them.
in_ns() { local ns=$1; shift; ip netns exec "$prefix-$ns" "$@"; }
sw_tc() { ip netns exec "$prefix-sw" tc "$@"; }

# The bottleneck into each stage: htb at RATE_MBIT. htb lets a packet
# through while it has credit and charges it after, and after an idle spell
# it passes its burst at once: an unpaced sender gets that, a paced one
# does not. With 64 KB GSO packets and a 64 KB burst (the default) that is
# about two packets; with wire-sized packets (GSO=0) and a 4 KB burst a
# few, as on a real link (docs/real-pipeline.md, "The bottleneck's
# credit"). One FIFO, as a switch port without QoS; or, for bulk-qos, two
# classes as an operator would configure switch QoS for the job: the job's
# traffic (everything not from bg) in 1:10, served first with 90% of the
# rate guaranteed and the rest to borrow, and the competitor in 1:20 (10%).
# Each class has a FIFO of QUEUE_KB (netns_fifo).
configure_bottleneck() {  # COMPETITION
  local s port burst=(burst "${burst_kb}k" cburst "${burst_kb}k") fifo
  read -r -a fifo <<<"$(netns_fifo "$queue_kb")"
  for ((s = 0; s < stages; s++)); do
    port=sw-s$s
    sw_tc qdisc del dev "$port" root 2>/dev/null || true
    sw_tc qdisc add dev "$port" root handle 1: htb default 10
    sw_tc class add dev "$port" parent 1: classid 1:1 htb rate "${rate_mbit}mbit" "${burst[@]}" quantum 1514
    if [[ $1 == bulk-qos ]]; then
      sw_tc class add dev "$port" parent 1:1 classid 1:10 htb rate "$((rate_mbit * 900))kbit" \
        ceil "${rate_mbit}mbit" "${burst[@]}" prio 0 quantum 1514
      sw_tc class add dev "$port" parent 1:1 classid 1:20 htb rate "$((rate_mbit * 100))kbit" \
        ceil "${rate_mbit}mbit" "${burst[@]}" prio 1 quantum 1514
      sw_tc qdisc add dev "$port" parent 1:20 handle 20: "${fifo[@]}"
      sw_tc filter add dev "$port" parent 1: protocol ip prio 1 u32 match ip src "$(address bg)/32" flowid 1:20
    else
      sw_tc class add dev "$port" parent 1:1 classid 1:10 htb rate "${rate_mbit}mbit" \
        ceil "${rate_mbit}mbit" "${burst[@]}" quantum 1514
    fi
    sw_tc qdisc add dev "$port" parent 1:10 handle 10: "${fifo[@]}"
  done
}

# The unmanaged competitor: one bulk TCP flow from bg into every stage.
bulk_pids=()
start_bulk() {
  for ((s = 0; s < stages; s++)); do
    ip netns exec "$prefix-s$s" $python -c '
import socket
srv = socket.create_server(("0.0.0.0", 5001)); c, _ = srv.accept()
while c.recv(1 << 20): pass' &
    bulk_pids+=($!)
  done
  sleep 0.5
  for ((s = 0; s < stages; s++)); do
    ip netns exec "$prefix-bg" $python -c '
import socket, sys
c = socket.create_connection((sys.argv[1], 5001)); b = bytes(1 << 20)
while True: c.sendall(b)' "$(address "s$s")" 2>/dev/null &
    bulk_pids+=($!)
  done
  sleep 1  # past slow start
}
stop_bulk() {
  ((${#bulk_pids[@]})) && kill "${bulk_pids[@]}" 2>/dev/null || true
  wait "${bulk_pids[@]}" 2>/dev/null || true
  bulk_pids=()
}

# Background on the job's transport, for one cell: SAFS background flows
# into each stage's endpoint (port 7100), or TCP into a sink (port 5001).
background_pids=()
start_background() {  # COMM NAME
  local s peers=() name=$2
  if [[ $1 != safs* ]]; then
    for ((s = 0; s < stages; s++)); do
      # On SIGTERM the sink writes the bytes it got and the seconds since
      # its sender connected: the background's rate over the cell.
      ip netns exec "$prefix-s$s" $python -c '
import signal, socket, sys, time
t0, got = time.monotonic(), 0
def done(*_):
    open(sys.argv[1], "w").write("%d %.6f" % (got, time.monotonic() - t0)); sys.exit(0)
signal.signal(signal.SIGTERM, done)
srv = socket.create_server(("0.0.0.0", 5001)); c, _ = srv.accept(); t0 = time.monotonic()
while True:
    n = len(c.recv(1 << 20)); got += n
    if not n: done()' "$out/$name.sink$s" &
      background_pids+=($!)
      peers+=("$(address "s$s"):5001")
    done
  else
    for ((s = 0; s < stages; s++)); do peers+=("$(address "s$s"):7100"); done
  fi
  ip netns exec "$prefix-bg" env PYTHONPATH="$root/build/python" SAFS_JOB_KEY_FILE="$keydir/job.key" \
    $python "$here/background.py" "$([[ $1 == safs* ]] && echo safs || echo tcp)" \
    --listen-host "$(address bg)" "${peers[@]}" 2>/dev/null &
  background_pids+=($!)
}
stop_background() {
  ((${#background_pids[@]})) && kill "${background_pids[@]}" 2>/dev/null || true
  wait "${background_pids[@]}" 2>/dev/null || true
  background_pids=()
}

# TCP_SAMPLES=1: each stage's TCP connections every 100 ms, each sample
# headed by "@ SECONDS STAGE" (the wall clock), until killed.
sample_tcp() {  # FILE
  local s
  while :; do
    for ((s = 0; s < stages; s++)); do
      echo "@ $(date +%s.%N) s$s"
      in_ns "s$s" ss -tinH || true
    done
    sleep 0.1
  done >"$1"
}

run_cell() {  # SCHEDULE COMM COMPETITION RUN
  local name="$1.$2.$3.$4" pids=() s
  if [[ $3 == background ]]; then start_background "$2" "$name"; fi
  if ((tcp_samples)); then
    sample_tcp "$out/$name.tcp.txt" &
    sampler=$!
  fi
  for ((s = 0; s < stages; s++)); do
    in_ns "s$s" env PYTHONPATH="$root/build/python" SAFS_JOB_KEY_FILE="$keydir/job.key" \
      SAFS_LISTEN_PORT=7100 SAFS_BACKGROUND="$([[ $3 == background ]] && echo 1 || echo 0)" \
      SAFS_LISTEN_HOST="$(address "s$s")" SAFS_DOWNLINK_BPS="$((rate_mbit * 1000000))" \
      GLOO_SOCKET_IFNAME="eth-s$s" OPENBLAS_NUM_THREADS=1 timeout 300 $python "$here/pipeline.py" --rank "$s" --stages "$stages" \
      --schedule "$1" --comm "$2" --microbatches "$microbatches" --iterations "$iterations" \
      --link-mbit "$rate_mbit" --queue-kb "${queue_kb:-0}" --unpaced-connections "$unpaced_connections" \
      --master "$(address s0):29500" --out "$out/$name.rank$s.json" &
    pids+=($!)
  done
  # The first stage to fail ends the cell at once (the others, and the
  # sampler, go with cleanup), whichever rank it is.
  local finished status
  while ((${#pids[@]})); do
    status=0
    wait -n -p finished "${pids[@]}" || status=$?
    if ((status != 0)); then
      echo "torch-pipeline: a stage of $name failed (exit $status)" >&2
      return 1
    fi
    for s in "${!pids[@]}"; do [[ ${pids[s]} == "$finished" ]] && unset 'pids[s]'; done
  done
  if [[ -n $sampler ]]; then
    kill "$sampler" 2>/dev/null || true
    wait "$sampler" 2>/dev/null || true
    sampler=
  fi
  if [[ $3 == background ]]; then stop_background; fi
  PYTHONPATH=$root/build/python $python "$here/to_scenario.py" --competitor "$3" "$out/$name.toml" "$out/$name".rank*.json \
    >"$out/$name.sim.json"
  echo "torch-pipeline: $name done" >&2
}

# Rounds: each run of a cell follows one run of every other cell of its
# competitor, so that a slow minute of this shared machine falls on every
# communication alike, not on one cell's runs. Each round starts the
# communications one further along the list, so that none always runs first
# (the first of a schedule's cells ran slower in an earlier table).
for competition in "${competition_list[@]}"; do
  configure_bottleneck "$competition"
  if [[ $competition == bulk* ]]; then start_bulk; fi
  for ((run = 1; run <= runs; run++)); do
    for schedule in "${schedule_list[@]}"; do
      for ((i = 0; i < ${#comm_list[@]}; i++)); do
        comm=${comm_list[(i + run - 1) % ${#comm_list[@]}]}
        run_cell "$schedule" "$comm" "$competition" "$run"
      done
    done
  done
  if [[ $competition == bulk* ]]; then stop_bulk; fi
done
$python "$here/report.py" "$out" "$rate_mbit" | tee "$out/table.md"
