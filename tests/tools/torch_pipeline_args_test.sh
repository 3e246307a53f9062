#!/usr/bin/env bash
# examples/torch-pipeline/run.sh refuses bad settings with exit 2 and a
# message naming the setting, before it needs root or touches a namespace,
# and will not write into a directory that is not its own.
#   tests/tools/torch_pipeline_args_test.sh SOURCE_DIR
set -uo pipefail
script=$1/examples/torch-pipeline/run.sh
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0
expect_bad() {  # WHAT MESSAGE ENV... (run with `env ENV... bash run.sh OUT`)
  local what=$1 message=$2
  shift 2
  local output code=0
  output=$(env "$@" bash "$script" "$scratch/out" 2>&1) || code=$?
  if [[ $code -eq 2 && $output == *"$message"* ]]; then
    echo "ok: $what"
  else
    echo "FAIL: $what (exit $code): $output"
    failures=$((failures + 1))
  fi
}
expect_bad "rate not a number" "RATE_MBIT = 'fast'" RATE_MBIT=fast
expect_bad "one stage" "STAGES = '1': expected 2..8" STAGES=1
expect_bad "zero runs" "RUNS = '0'" RUNS=0
expect_bad "an unknown competitor" "COMPETITION = 'netem'" COMPETITION="none netem"
expect_bad "an unknown communication" "COMMS = 'nccl'" COMMS="safs nccl"
expect_bad "an unknown schedule" "SCHEDULES = 'zb-v'" SCHEDULES="1f1b zb-v"
mkdir -p "$scratch/out" && echo mine >"$scratch/out/notes.txt"
expect_bad "someone else's directory" "is not an earlier run's output"
[[ $(cat "$scratch/out/notes.txt") == mine ]] || { echo "FAIL: notes.txt changed"; failures=$((failures + 1)); }
exit $((failures > 0))
