#!/usr/bin/env bash
# Where SAFS loses on the fat tree (bench/README.md, "A 1024-GPU cluster"):
# the AFD job of bench/fattree-multi-job.toml alone (bench/fattree-afd-alone.toml)
# with DCTCP, DCTCP with a strict-priority class for urgent transfers and
# SAFS, on the fat tree, on one switch (a star of as many hosts), and on the
# fat tree without its KV-cache background; SAFS with that background on
# plain DCTCP (mixed tenants); and SAFS with transport.safs.rate_within_window.
# Two runs at a time, about two minutes on 2 cores; prints one markdown
# table. Outputs
# go to out/afd-fattree/. Run scripts/setup.sh first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
sim=${SAFS_SIM:-build/bin/safs-sim}
[[ -x $sim ]] || {
  echo "afd-fattree: $sim is not built (run scripts/setup.sh)" >&2
  exit 2
}
expect_prefix=afd-fattree
# shellcheck source=scripts/expect.sh
source scripts/expect.sh
expect_no_more_arguments $# 0 "bench/afd-fattree.sh"
if [[ ! ${SAFS_JOBS:-2} =~ ^[1-9][0-9]{0,3}$ ]]; then
  echo "afd-fattree: SAFS_JOBS = '$SAFS_JOBS': expected a number of runs at once, 1 to 9999" >&2
  exit 2
fi
fat_tree=bench/fattree-afd-alone.toml
mkdir -p out/afd-fattree
# The star: the same file with its [topology] table replaced by one switch
# of as many hosts (data paths made relative to the repository, where the
# runs start).
star=out/afd-fattree/star.toml
sed -e 's/^kind = "fat_tree"$/kind = "star"/' -e 's/^k = 16$/hosts = 1024/' \
  -e 's|"\.\./data/|"data/|' "$fat_tree" >"$star"
cases() {  # name, scenario, then the run's extra arguments
  for t in dctcp dctcp-prio safs; do
    echo "fat-tree-$t $fat_tree --transport $t"
    echo "star-$t $star --transport $t"
    echo "no-kv-$t $fat_tree --transport $t --set inference.kv_load=0"
  done
  # SAFS for the AFD transfers, its KV-cache background on plain DCTCP.
  echo "fat-tree-safs-dctcp-background $fat_tree --transport safs --set transport.background=dctcp"
  # SAFS paced at no more than its window per RTT (off by default).
  echo "fat-tree-safs-rate-within-window $fat_tree --transport safs --set transport.safs.rate_within_window=true"
  echo "star-safs-rate-within-window $star --transport safs --set transport.safs.rate_within_window=true"
}
export sim
cases | xargs -P "${SAFS_JOBS:-2}" -L 1 sh -c \
  'name=$0 scenario=$1; shift; "$sim" run "$scenario" --out "out/afd-fattree/$name" --force --quiet "$@"'
dirs=()
for c in fat-tree star no-kv; do
  for t in dctcp dctcp-prio safs; do dirs+=("out/afd-fattree/$c-$t"); done
done
dirs+=(out/afd-fattree/fat-tree-safs-dctcp-background out/afd-fattree/fat-tree-safs-rate-within-window
  out/afd-fattree/star-safs-rate-within-window)
"$sim" compare "${dirs[@]}" --metric "inference.tpot_p99_ms:p99 TPOT (ms)" \
  --metric "inference.tpot_p50_ms:p50 TPOT (ms)" --metric "network.queue_drops:drops" \
  --metric "network.max_switch_queue_bytes:largest switch queue (bytes)" \
  --metric "transport_stats.timeouts:timeouts"
