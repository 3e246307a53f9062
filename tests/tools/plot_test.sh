#!/usr/bin/env bash
# Every tools/plot command makes a non-empty PNG from small runs (skipped,
# exit 77, when matplotlib is missing). Usage: plot_test.sh SAFS_SIM SOURCE_DIR
set -euo pipefail
sim=$1 source_dir=$2
plot=$source_dir/tools/plot
if ! /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
  echo "skipped: matplotlib is missing (python3-matplotlib)"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
expect_png() {  # name, then the plot command's arguments
  local name=$1
  shift
  if "$plot" "$@" -o "$work/$name.png" >/dev/null && [[ -s "$work/$name.png" ]] &&
    [[ $(head -c 4 "$work/$name.png" | od -An -c | tr -d ' ') == "211PNG" ]]; then
    echo "ok: $name"
  else
    echo "FAILED: $name"
    failures=$((failures + 1))
  fi
}

incast=$source_dir/scenarios/examples/incast.toml
for t in dctcp safs; do
  "$sim" run "$incast" --transport "$t" --queue-sample-us 5 --quiet --out "$work/incast-$t"
done
# A small pipeline: 8 MiB transfers, 1 ms ops, so the grid takes seconds.
"$sim" sweep "$source_dir/scenarios/paper/zb-training.toml" --quiet --out "$work/zb" \
  --set pipeline.hidden=1024 --set pipeline.forward_ms=1 --set pipeline.backward_ms=1 \
  --set pipeline.weight_ms=1 --set pipeline.background_flow_bytes=100000000 \
  --grid transport.name=dctcp,safs --grid pipeline.background_flows_per_stage=0,1
# Time per output token comes from the inference workload; a summary with
# just that section stands in for one here.
mkdir -p "$work/infer-a" "$work/infer-b"
echo '{"transport": "dctcp", "inference": {"tpot_p50_ms": 2.5, "tpot_p99_ms": 7.0}}' \
  >"$work/infer-a/summary.json"
echo '{"transport": "safs", "inference": {"tpot_p50_ms": 2.1, "tpot_p99_ms": 2.9}}' \
  >"$work/infer-b/summary.json"

expect_png fct-cdf fct-cdf "$work/incast-dctcp" "$work/incast-safs"
expect_png iteration iteration "$work/zb/sweep.csv"
expect_png tpot tpot "$work/infer-a" "$work/infer-b"
expect_png gantt gantt "$work/zb/transport=dctcp,background_flows_per_stage=1" \
  "$work/zb/transport=safs,background_flows_per_stage=1"
expect_png queue queue "$work/incast-dctcp" "$work/incast-safs"

# A run without the inference section is a clear error, not a traceback.
if "$plot" tpot "$work/incast-dctcp" -o "$work/none.png" 2>"$work/err.txt"; then
  echo "FAILED: tpot accepted a run without inference results"
  failures=$((failures + 1))
elif grep -q "no inference.tpot_p50_ms" "$work/err.txt"; then
  echo "ok: tpot without inference results"
else
  echo "FAILED: tpot error message: $(cat "$work/err.txt")"
  failures=$((failures + 1))
fi
echo "$((6 - failures)) passed, $failures failed"
((failures == 0))
