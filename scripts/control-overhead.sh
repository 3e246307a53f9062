#!/usr/bin/env bash
# SAFS's control traffic in every cell of a finished run of the evaluation
# matrix (scripts/evaluation.sh LEVEL first; nothing is run here): per cell,
# the mean over its seeds of the scheduling packets (grants, metadata and
# sender reports) per 100 data packets of all flows, the urgent flows' own
# control per 100 of their data packets, and control packets per urgent
# flow. Prints one markdown table on stdout (docs/evaluation.md, "Control
# traffic per cell").
#   scripts/control-overhead.sh [standard|quick|full|ci]   (default standard)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/common.sh
at_most_arguments 1 "$@"
level=$(matrix_level "${1:-}") || exit 2
runs=out/eval/$level
if ! compgen -G "$runs/*/*/safs" >/dev/null; then
  echo "control-overhead.sh: no SAFS cells in $runs: run scripts/evaluation.sh $level first" >&2
  exit 2
fi
"$python" - "$runs" <<'EOF'
import glob, json, os, statistics, sys
runs = sys.argv[1]
print("| scenario | variant | seeds | scheduling packets per 100 data (all flows) "
      "| urgent control per 100 data | control packets per urgent flow |")
print("|---|---|---:|---:|---:|---:|")
for cell in sorted(glob.glob(f"{runs}/*/*/safs")):
    variant_dir = os.path.dirname(cell)
    scenario, variant = os.path.basename(os.path.dirname(variant_dir)), os.path.basename(variant_dir)
    summaries = sorted(glob.glob(f"{cell}/*/summary.json"))
    if not summaries:
        continue
    sched, urgent, per_flow = [], [], []
    for path in summaries:
        with open(path) as f:
            s = json.load(f)
        try:
            stats = s["transport_stats"]
            sched.append(100 * stats["scheduling_packets"] / max(1, stats["data_packets"]))
            urgent.append(s["urgent"]["control_per_100_data_packets"])
            per_flow.append(s["urgent"]["control_packets_per_flow"])
        except (KeyError, TypeError) as e:
            print(f"control-overhead: {path}: no {e} (not a SAFS run's summary.json?)",
                  file=sys.stderr)
            sys.exit(2)
    print(f"| {scenario} | {variant} | {len(summaries)} | {statistics.mean(sched):.2f} "
          f"| {statistics.mean(urgent):.2f} | {statistics.mean(per_flow):.1f} |")
EOF
