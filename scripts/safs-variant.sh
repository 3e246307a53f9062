#!/usr/bin/env bash
# SAFS with its knobs changed in every cell of the evaluation matrix, beside
# SAFS with its defaults and the best other transport of a finished run of
# the whole matrix (scripts/evaluation.sh LEVEL first). Prints one markdown
# table on stdout: per cell, each SAFS's result over the best other's, its
# scheduling packets per 100 data packets (all flows), and the packets the
# switches dropped. Runs go to out/eval-NAME/LEVEL, afresh unless
# SAFS_RESUME=1 (then finished points are kept: the sweeps' resume). A cell
# that fails is left out of the table and the exit status is 1.
#   scripts/safs-variant.sh NAME "LONG LABEL" "SHORT LABEL" LEVEL KEY=VALUE...
# e.g. scripts/window-background.sh, scripts/announce-ahead.sh,
# scripts/background-streams.sh and scripts/coordinated-senders.sh; LEVEL is
# standard, quick, full or ci ("" for standard).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/common.sh
if (($# < 5)); then
  echo "usage: scripts/safs-variant.sh NAME \"LONG LABEL\" \"SHORT LABEL\" LEVEL KEY=VALUE..." >&2
  exit 2
fi
name=$1 long_label=$2 short_label=$3
level=$(matrix_level "$4") || exit 2
shift 4
overrides=()
for setting in "$@"; do overrides+=(--set "transport.safs.$setting"); done
matrix_runs=out/eval/$level
if [[ ! -f $matrix_runs/matrix.csv ]]; then
  echo "$name: no $matrix_runs/matrix.csv: run scripts/evaluation.sh $level first" >&2
  exit 2
fi
[[ $name =~ ^[a-z0-9][a-z0-9-]*$ ]] || {
  echo "safs-variant.sh: NAME '$name': expected lower-case letters, digits and -" >&2
  exit 2
}
# The settings, before anything is emptied or run.
expect_scenario scenarios/examples/incast.toml --set transport.name=safs "${overrides[@]}"
runs=out/eval-$name/$level
progress "SAFS with $*, level $level, into $runs"
safs_matrix "$runs" "$level" "${overrides[@]}"
"$python" - "$matrix_runs" "$runs" "$long_label" "$short_label" <<'EOF'
import csv, glob, importlib.machinery, importlib.util, json, statistics, sys
matrix_runs, runs, long_label, short_label = sys.argv[1:5]

# tools/evaluate names each cell's directory; use its own slug, not a copy.
sys.path.insert(0, "tools")  # its modules sit beside it
loader = importlib.machinery.SourceFileLoader("evaluate", "tools/evaluate")
evaluate = importlib.util.module_from_spec(importlib.util.spec_from_loader("evaluate", loader))
loader.exec_module(evaluate)
slug = evaluate.slug

def means(path):
    with open(path, newline="") as f:
        return {(r["scenario"], r["variant"], r["transport"]): (float(r["mean"]), r["compare"])
                for r in csv.DictReader(f)}

def control_and_drops(cell):
    sched, drops = [], []
    for path in sorted(glob.glob(f"{cell}/*/summary.json")):
        with open(path) as f:
            s = json.load(f)
        t = s["transport_stats"]
        sched.append(100 * t["scheduling_packets"] / max(1, t["data_packets"]))
        drops.append(s["network"]["queue_drops"])
    if not sched:
        return "-", "-"
    return f"{statistics.mean(sched):.2f}", f"{statistics.mean(drops):.0f}"

full, window = means(f"{matrix_runs}/matrix.csv"), means(f"{runs}/matrix.csv")
print("| scenario | variant | best other | SAFS (defaults) vs best other "
      f"| SAFS, {long_label}, vs best other "
      f"| scheduling packets per 100 data: defaults | {short_label} "
      f"| queue drops: defaults | {short_label} |")
print("|---|---|---|---:|---:|---:|---:|---:|---:|")
for (scenario, variant, transport), (value, compare) in full.items():
    if transport != "safs" or (scenario, variant, "safs") not in window:
        continue
    others = {t: v for (s, w, t), (v, _) in full.items()
              if s == scenario and w == variant and t != "safs"}
    if not others:
        continue  # a run of the matrix without the other transports
    best = min(others, key=others.get)
    if compare == "ratio":
        versus = lambda x: f"{x / others[best]:.3f}" if others[best] else "-"
    else:
        versus = lambda x: f"{x - others[best]:+.3g} (difference)"
    cell = f"{scenario}/{slug(variant)}/safs"
    c0, d0 = control_and_drops(f"{matrix_runs}/{cell}")
    c1, d1 = control_and_drops(f"{runs}/{cell}")
    print(f"| {scenario} | {variant} | {best} | {versus(value)} "
          f"| {versus(window[(scenario, variant, 'safs')][0])} "
          f"| {c0} | {c1} | {d0} | {d1} |")
# A cell in one run and not the other has no row: name it, not drop it silently.
cells = lambda table: {(s, w) for (s, w, t) in table if t == "safs"}
for what, names in (("the defaults' matrix", cells(window) - cells(full)),
                    ("this variant's run", cells(full) - cells(window))):
    for scenario, variant in sorted(names):
        print(f"safs-variant: {scenario} / {variant}: no SAFS cell in {what}, so no row",
              file=sys.stderr)
EOF
exit "$matrix_status"
