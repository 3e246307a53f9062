#!/usr/bin/env bash
# Byte-identical check for refactors: runs every scenario in scenarios/ with
# every transport (plus a few variants that reach other code paths) and
# records a SHA-256 per output file, with summary.json's wall-clock and
# provenance fields removed (they differ between any two runs).
#
#   scripts/check-identical.sh record DIR    # before the change: DIR/manifest.txt
#   scripts/check-identical.sh compare DIR   # after it: rerun, diff against DIR
#
# SAFS_SIM picks the binary (default build/bin/safs-sim), SAFS_JOBS the
# parallel runs (default: nproc), SAFS_CHECK_ONLY an extended regular
# expression of case names to run (compare then checks only those; the
# whole set took 204 s on 2 cores on 2026-12-04, 'incast|fct|zb' less),
# SAFS_CHECK_IGNORE further summary.json keys to leave out, separated by
# commas (e.g. 'events', for a change that removes events that did nothing:
# record and compare must then both leave them out). Exit 0 when every
# output matches, 1 when one differs (the diff names it), 2 on bad usage.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

usage() {
  echo "usage: scripts/check-identical.sh record|compare DIR" >&2
  exit 2
}
(($# == 2)) || usage
mode=$1
dir=$2
[[ $mode == record || $mode == compare ]] || usage
sim=${SAFS_SIM:-build/bin/safs-sim}
[[ -x $sim ]] || {
  echo "check-identical: $sim is not built (run scripts/setup.sh)" >&2
  exit 2
}
ignore=${SAFS_CHECK_IGNORE:-}
[[ $ignore =~ ^[a-z_,]*$ ]] || {
  echo "check-identical: SAFS_CHECK_IGNORE: expected summary.json keys separated by commas, got '$ignore'" >&2
  exit 2
}
if [[ $mode == compare && ! -f $dir/manifest.txt ]]; then
  echo "check-identical: $dir/manifest.txt: no recorded manifest (run 'record' first)" >&2
  exit 2
fi
python=/usr/bin/python3
[[ -x $python ]] || python=python3

# One case per line: name, scenario, extra arguments.
cases() {
  local transports
  transports=$("$sim" transports | awk '{print $1}')
  for f in scenarios/*/*.toml; do
    [[ $f == scenarios/eval/* ]] && continue  # below, shortened
    local stem=${f#scenarios/}
    stem=${stem%.toml}
    stem=${stem//\//-}
    for t in $transports; do
      echo "$stem-$t $f --transport $t"
    done
  done
  # The evaluation matrix's scenarios with its ci level's settings (at full
  # length one of them takes an hour), each with every transport.
  "$python" - "$transports" <<'PY'
import sys, tomllib
with open("scenarios/eval/matrix.toml", "rb") as f:
    matrix = tomllib.load(f)
for s in matrix["scenario"]:
    sets = " ".join("--set " + a for a in s.get("set", []) + s.get("ci", []))
    for t in sys.argv[1].split():
        # No trailing blank: xargs -L would join the next line to this one.
        print(f"eval-{s['name']}-{t} scenarios/eval/{s['file']} --transport {t} {sets}".rstrip())
PY
  # Variants the paper scripts use, which reach other code paths.
  echo "zb-k2-safs scenarios/paper/zb-training.toml --transport safs --set pipeline.background_flows_per_stage=2"
  echo "zb-k2-dctcp scenarios/paper/zb-training.toml --transport dctcp --set pipeline.background_flows_per_stage=2"
  echo "zb-k2-homa scenarios/paper/zb-training.toml --transport homa --set pipeline.background_flows_per_stage=2"
  echo "afd-free scenarios/paper/afd-16a2f.toml --set inference.free_communication=true"
  echo "afd-safs-urgent-first scenarios/paper/afd-16a2f.toml --transport safs --set transport.safs.urgent_first=1"
  echo "incast-safs-urgent-first scenarios/micro/incast.toml --transport safs --set transport.safs.urgent_first=1"
  echo "incast-safs-batch scenarios/micro/incast.toml --transport safs --set transport.safs.batch_changes_us=5"
  echo "fct-safs-srpt scenarios/micro/workload-fct.toml --transport safs --set transport.safs.background_srpt=1"
  echo "fct-dctcp-loss scenarios/micro/workload-fct.toml --transport dctcp --set network.link_loss_rate=0.001"
  echo "fct-safs-loss scenarios/micro/workload-fct.toml --transport safs --set network.link_loss_rate=0.001"
  echo "trace-zb-safs scenarios/paper/zb-training.toml --transport safs --set pipeline.background_flows_per_stage=1 --trace TRACE"
  echo "trace-incast-safs scenarios/micro/incast.toml --transport safs --trace TRACE"
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export sim work python ignore

run_case() {  # name scenario args...: one run, its hashes on stdout
  local name=$1
  shift
  local out="$work/$name"
  local args=("$@")
  for i in "${!args[@]}"; do
    [[ ${args[$i]} == TRACE ]] && args[$i]="$out.trace.json"
  done
  if ! "$sim" run "${args[@]}" --out "$out" --quiet 2>"$out.stderr"; then
    echo "$name run-failed $(tail -1 "$out.stderr")"
    return
  fi
  for file in "$out"/* "$out.trace.json"; do
    [[ -f $file ]] || continue
    local base=${file##*/}
    [[ $file == "$out.trace.json" ]] && base=trace.json
    if [[ $base == summary.json ]]; then
      "$python" - "$file" "$ignore" <<'PY' >"$file.stable"
import json, sys
VOLATILE = {"wall_s", "events_per_s", "peak_rss_mib", "setup_wall_s", "run_wall_s",
            "provenance", "wall_setup_s", "wall_run_s"} | set(filter(None, sys.argv[2].split(",")))
def strip(node):
    if isinstance(node, dict):
        return {k: strip(v) for k, v in node.items() if k not in VOLATILE}
    if isinstance(node, list):
        return [strip(v) for v in node]
    return node
print(json.dumps(strip(json.load(open(sys.argv[1]))), indent=1))
PY
      file="$file.stable"
    fi
    echo "$name $base $(sha256sum "$file" | cut -d' ' -f1)"
  done
}
export -f run_case

mkdir -p "$dir"
result="$work/manifest.txt"
only=${SAFS_CHECK_ONLY:-.}
selected() { cases | grep -E "^[^ ]*(${only})" || true; }
start=$(date +%s)
selected | xargs -P "${SAFS_JOBS:-$(nproc)}" -L 1 bash -c 'run_case "$@"' _ | sort >"$result"
echo "check-identical: $(wc -l <"$result") outputs from $(selected | wc -l) runs in $(($(date +%s) - start)) s" >&2
if grep -q ' run-failed ' "$result"; then
  grep ' run-failed ' "$result" >&2
fi
if [[ $mode == record ]]; then
  if [[ $only != . ]]; then
    echo "check-identical: record takes every case (unset SAFS_CHECK_ONLY)" >&2
    exit 2
  fi
  cp "$result" "$dir/manifest.txt"
  echo "check-identical: recorded $dir/manifest.txt" >&2
  exit 0
fi
# Only the recorded lines of the cases that ran; cases the manifest does not
# have (a transport or scenario added since) are new, not different.
names=$(selected | awk '{print $1}')
awk 'NR == FNR { want[$1] = 1; next } want[$1]' <(echo "$names") "$dir/manifest.txt" >"$work/recorded"
awk 'NR == FNR { known[$1] = 1; next } known[$1]' "$dir/manifest.txt" "$result" >"$work/comparable"
new_cases=$(awk 'NR == FNR { known[$1] = 1; next } !known[$1] { print $1 }' "$dir/manifest.txt" "$result" | sort -u | wc -l)
if ((new_cases > 0)); then
  echo "check-identical: $new_cases cases are not in $dir/manifest.txt (new since it was recorded); not compared" >&2
fi
result="$work/comparable"
if diff "$work/recorded" "$result" >"$work/diff"; then
  echo "check-identical: every output is byte-identical to $dir/manifest.txt" >&2
  exit 0
fi
echo "check-identical: outputs differ (< recorded, > now):" >&2
cat "$work/diff" >&2
exit 1
