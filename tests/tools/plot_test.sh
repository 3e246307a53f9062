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

# Bad input: exit code 2 and a message naming what is wrong, never a traceback.
expect_bad() {  # name, expected message part, then the plot command's arguments
  local name=$1 expected=$2 rc=0
  shift 2
  "$plot" "$@" >/dev/null 2>"$work/err.txt" || rc=$?
  if ((rc == 2)) && grep -qF -- "$expected" "$work/err.txt" && ! grep -q Traceback "$work/err.txt"; then
    echo "ok: $name"
  else
    echo "FAILED: $name (exit $rc, expected 2 and '$expected'): $(cat "$work/err.txt")"
    failures=$((failures + 1))
  fi
}
mkdir -p "$work/bad-json" "$work/bad-flows" "$work/no-column" "$work/bad-ops" "$work/not-object"
echo '{"transport": "dctcp", ' >"$work/bad-json/summary.json"
cp "$work/incast-dctcp/summary.json" "$work/bad-flows/"
cp "$work/incast-dctcp/summary.json" "$work/no-column/"
cp "$work/incast-dctcp/summary.json" "$work/bad-ops/"
printf 'id,class,slowdown\n0,urgent,fast\n' >"$work/bad-flows/flows.csv"
printf 'id,class,fct_s\n0,urgent,1.0\n' >"$work/no-column/flows.csv"
printf 'gpu,label,start_s,end_s\n0,F0,0,1\n' >"$work/bad-ops/ops.csv"
echo '[1, 2]' >"$work/not-object/summary.json"
: >"$work/empty.csv"
good=("$work/incast-dctcp" "$work/incast-safs")
expect_bad "-o in a missing directory" "directory $work/missing-dir does not exist" \
  fct-cdf "${good[@]}" -o "$work/missing-dir/x.png"
expect_bad "-o a directory" "is a directory" fct-cdf "${good[@]}" -o "$work"
expect_bad "a scale that is not a number" "--scale: 'nan': expected a finite number" \
  iteration "$work/empty.csv" --scale nan -o "$work/nan.png"
expect_bad "-o with an unknown format" "-o $work/x.nosuchformat" \
  fct-cdf "${good[@]}" -o "$work/x.nosuchformat"
echo "the user's" >"$work/kept.png"
expect_bad "an existing -o" "exists; choose another name, or add --force" \
  fct-cdf "${good[@]}" -o "$work/kept.png"
if [[ $(cat "$work/kept.png") == "the user's" ]] &&
  "$plot" fct-cdf "${good[@]}" --force -o "$work/kept.png" >/dev/null &&
  [[ $(head -c 4 "$work/kept.png" | od -An -c | tr -d ' ') == "211PNG" ]]; then
  echo "ok: an existing -o is kept, and replaced with --force"
else
  echo "FAILED: an existing -o is kept, and replaced with --force"
  failures=$((failures + 1))
fi
expect_bad "missing run directory" "$work/nonexistent: does not exist" \
  fct-cdf "$work/nonexistent" -o "$work/x.png"
expect_bad "malformed summary.json" "$work/bad-json/summary.json: not valid JSON" \
  tpot "$work/bad-json" -o "$work/x.png"
expect_bad "summary.json not an object" "expected a JSON object" \
  gantt "$work/not-object" -o "$work/x.png"
expect_bad "missing flows.csv column" "flows.csv: no column 'slowdown'" \
  fct-cdf "$work/no-column" -o "$work/x.png"
expect_bad "non-number in flows.csv" "line 2: column 'slowdown' is 'fast', expected a number" \
  fct-cdf "$work/bad-flows" -o "$work/x.png"
expect_bad "missing ops.csv" "ops.csv: missing" gantt "$work/incast-dctcp" -o "$work/x.png"
expect_bad "missing ops.csv column" "ops.csv: no column 'wait_s'" gantt "$work/bad-ops" -o "$work/x.png"
expect_bad "missing queues.csv" "run with --queue-sample-us" queue "$work/bad-flows" -o "$work/x.png"
expect_bad "missing sweep.csv" "$work/none.csv: missing" iteration "$work/none.csv" -o "$work/x.png"
expect_bad "empty sweep.csv" "$work/empty.csv: empty" iteration "$work/empty.csv" -o "$work/x.png"
expect_bad "unknown --x column" "no column 'background_flows'; did you mean" \
  iteration "$work/zb/sweep.csv" --x background_flows -o "$work/x.png"
expect_bad "tpot without inference results" "no inference.tpot_p50_ms" \
  tpot "$work/incast-dctcp" -o "$work/x.png"
expect_bad "--ports 0" "not a positive integer" queue "${good[@]}" --ports 0 -o "$work/x.png"
expect_bad "--log-y with a bad value" "invalid choice" tpot "$work/infer-a" --log-y sometimes \
  -o "$work/x.png"

# Runs of one transport are told apart by what differs between them.
"$sim" run "$incast" --transport safs --set transport.safs.urgent_first=1 --quiet \
  --out "$work/incast-safs-urgent"
label_check=$(/usr/bin/python3 - "$plot" "$work/incast-safs" "$work/incast-safs-urgent" <<'PY'
import importlib.machinery, importlib.util, sys
loader = importlib.machinery.SourceFileLoader("plot", sys.argv[1])
spec = importlib.util.spec_from_loader("plot", loader)
plot = importlib.util.module_from_spec(spec)
loader.exec_module(plot)
labels = plot.run_labels(sys.argv[2:])
print("distinct" if len(set(labels)) == len(labels) else f"same: {labels}")
PY
)
if [[ $label_check == distinct ]]; then
  echo "ok: labels of two safs runs differ"
else
  echo "FAILED: labels of two safs runs: $label_check"
  failures=$((failures + 1))
fi
expect_png iteration-x-transport iteration "$work/zb/sweep.csv" --x transport.name \
  --by pipeline.background_flows_per_stage --log-y

# The evaluation matrix's figure, from a matrix.csv as tools/evaluate writes it.
cat >"$work/matrix.csv" <<'CSV'
family,scenario,variant,transport,metric,label,scale,compare,seeds,mean,ci95
training,zb,light,dctcp,compute.iteration_time_s,iteration (ms),1000.0,ratio,2,0.25,0.01
training,zb,light,safs,compute.iteration_time_s,iteration (ms),1000.0,ratio,2,0.24,
incast,inc,as given,dctcp,urgent.max_lateness_s,lateness (ms),1000.0,difference,1,0.02,
incast,inc,as given,safs,urgent.max_lateness_s,lateness (ms),1000.0,difference,1,-0.00001,
CSV
expect_png matrix-relative matrix "$work/matrix.csv" --family training
expect_png matrix-difference matrix "$work/matrix.csv" --family incast
expect_bad "matrix family absent" "no rows of family 'fabric'" matrix "$work/matrix.csv" \
  --family fabric -o "$work/x.png"

# --version names the source commit, as the compiled tools do.
if [[ $("$plot" --version) =~ ^tools/plot\ [0-9.]+\ \(source\ [^\ ]+\)$ ]]; then
  echo "ok: --version"
else
  echo "FAILED: --version: $("$plot" --version 2>&1)"
  failures=$((failures + 1))
fi
# A bug inside a command ends in a message naming it, exit 1, no traceback.
internal_rc=0
/usr/bin/python3 - "$plot" "$work/infer-a" "$work/x.png" 2>"$work/err.txt" <<'PY' || internal_rc=$?
import importlib.machinery, importlib.util, sys
loader = importlib.machinery.SourceFileLoader("plot", sys.argv[1])
spec = importlib.util.spec_from_loader("plot", loader)
plot = importlib.util.module_from_spec(spec)
loader.exec_module(plot)
def broken(args):
    raise RuntimeError("a bug")
plot.tpot = broken
sys.argv = ["tools/plot", "tpot", sys.argv[2], "-o", sys.argv[3]]
plot.main()
PY
if ((internal_rc == 1)) && grep -qF "tools/plot tpot: internal error while writing $work/x.png (RuntimeError: a bug)" \
  "$work/err.txt" && ! grep -q Traceback "$work/err.txt"; then
  echo "ok: internal error"
else
  echo "FAILED: internal error (exit $internal_rc): $(cat "$work/err.txt")"
  failures=$((failures + 1))
fi

total=$(grep -cE '^(expect_png|expect_bad) ' "$0")
echo "$((total + 4 - failures)) passed, $failures failed"
((failures == 0))
