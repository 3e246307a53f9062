# shellcheck shell=bash
# Network namespaces for the one-machine testbeds (scripts/netns-testbed.sh,
# scripts/netns-uplink.sh, examples/torch-pipeline/run.sh): hosts on one
# bridge, each in a namespace of its own, addresses in 198.18.0.0/15 only.
# Sourced, not run.

# Exits 0 with a SKIP message unless this shell is root and may create
# network namespaces.
netns_require() {  # WHAT PREFIX
  if [[ $(id -u) -ne 0 ]]; then echo "SKIP: $1 needs root" >&2; exit 0; fi
  # A name of this shell's own: a leftover namespace is not a missing
  # capability (netns_claim names leftovers).
  if ! ip netns add "$2-probe-$$" 2>/dev/null; then
    echo "SKIP: cannot create network namespaces" >&2
    exit 0
  fi
  ip netns del "$2-probe-$$"
}

# Exits 1 if another run owns the PREFIX-* namespaces.
netns_claim() {  # PREFIX
  # grep to /dev/null, not -q: an early exit would fail `ip` with SIGPIPE,
  # and under pipefail the claim would pass.
  if ip netns list | grep "^$1-" >/dev/null; then
    echo "another run owns the $1-* namespaces; not touching them" >&2
    exit 1
  fi
}

# A bridge br0 in namespace PREFIX-sw and, for each HOST=ADDRESS, a namespace
# PREFIX-HOST whose eth-HOST (ADDRESS/24) is joined to the bridge as sw-HOST.
netns_star() {  # PREFIX HOST=ADDRESS...
  local prefix=$1 pair host
  shift
  for pair in "$@"; do  # all checked before anything is made
    # eth-HOST must fit a 15-character interface name; "sw" is the bridge's.
    if [[ ! $pair =~ ^[a-z0-9]{1,11}=198\.1[89]\.[0-9]{1,3}\.[0-9]{1,3}$ || $pair == sw=* ]]; then
      echo "netns_star: '$pair': expected HOST=ADDRESS, HOST 1-11 of [a-z0-9] but not sw," \
        "ADDRESS in 198.18.0.0/15" >&2
      exit 2
    fi
  done
  ip netns add "$prefix-sw"
  ip -n "$prefix-sw" link add br0 type bridge
  ip -n "$prefix-sw" link set br0 up
  for pair in "$@"; do
    host=${pair%%=*}
    ip netns add "$prefix-$host"
    ip link add "eth-$host" netns "$prefix-$host" type veth peer name "sw-$host" netns "$prefix-sw"
    ip -n "$prefix-$host" addr add "${pair#*=}/24" dev "eth-$host"
    ip -n "$prefix-$host" link set lo up
    ip -n "$prefix-$host" link set "eth-$host" up
    ip -n "$prefix-sw" link set "sw-$host" master br0 up
  done
}

# Exits 2 (through expect, scripts/expect.sh) unless CC is empty or a TCP
# congestion control this host lets a namespace take as its default: only
# those in net.ipv4.tcp_allowed_congestion_control, a host-wide setting the
# testbeds leave alone.
netns_expect_congestion_control() {  # CC
  local allowed list=/proc/sys/net/ipv4/tcp_allowed_congestion_control
  [[ -z $1 ]] && return 0
  if [[ ! -r $list ]]; then
    echo "${expect_prefix:?}: CC = '$1': this host does not say which congestion controls a namespace may take ($list)" >&2
    exit 2
  fi
  read -r -a allowed <"$list"
  expect CC "$1" "^($(IFS='|' && echo "${allowed[*]}"))\$" \
    "one of what this host allows in namespaces: ${allowed[*]} (sysctl net.ipv4.tcp_allowed_congestion_control)"
}

# Sets the TCP setting net.ipv4.NAME to VALUE in every PREFIX-HOST namespace
# (empty: each keeps what a new namespace inherits, the host's), and prints
# the one in effect as "LABEL: value". The testbeds set two:
# tcp_congestion_control (CC) and tcp_slow_start_after_idle
# (TCP_IDLE_RESTART: 1, Linux's default, a connection idle for longer than
# its retransmission timeout starts its congestion window over; 0, it keeps
# its window).
netns_tcp_setting() {  # PREFIX NAME VALUE LABEL HOST...
  local prefix=$1 name=$2 value=$3 label=$4 host
  shift 4
  for host in "$@"; do
    if [[ -n $value ]]; then ip netns exec "$prefix-$host" sysctl -qw "net.ipv4.$name=$value"; fi
  done
  echo "$label: $(ip netns exec "$prefix-$1" cat "/proc/sys/net/ipv4/$name")"
}

# Exits 2 (through expect) unless QUEUE_KB is empty or 1 to 999999 KB (a
# byte limit tc takes: under 2^32 bytes).
netns_expect_fifo() {  # QUEUE_KB
  expect QUEUE_KB "$1" '^([1-9][0-9]{0,5})?$' "1 to 999999 KB (unset: 1000 packets)"
}

# Prints the FIFO a testbed puts behind its bottleneck, as tc's qdisc kind
# and limit: with QUEUE_KB empty, 1000 packets (pfifo: with the veths' 64 KB
# GSO packets up to 64 MB, 2.6 s at 200 Mbit/s, deeper than any switch
# port); else QUEUE_KB kilobytes (bfifo: bytes, however the hosts batch
# them into packets, as a switch port's buffer counts them).
netns_fifo() {  # QUEUE_KB
  if [[ -z $1 ]]; then echo "pfifo limit 1000"; else echo "bfifo limit $(($1 * 1024))"; fi
}

# A fresh job key for the run's endpoints in FILE (mode 600), exported as
# SAFS_JOB_KEY_FILE: read from the environment, never the command line.
netns_job_key() {  # FILE
  (umask 077 && head -c 32 /dev/urandom >"$1")
  export SAFS_JOB_KEY_FILE=$1
}

# Kills every process in the hosts' namespaces and the bridge's, and deletes
# the namespaces (for an EXIT trap: never fails).
netns_remove() {  # PREFIX HOST...
  local prefix=$1 ns
  shift
  for ns in "$@" sw; do ip netns pids "$prefix-$ns" 2>/dev/null | xargs -r kill 2>/dev/null || true; done
  for ns in "$@" sw; do ip netns del "$prefix-$ns" 2>/dev/null || true; done
}
