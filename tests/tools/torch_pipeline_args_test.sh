#!/usr/bin/env bash
# examples/torch-pipeline/run.sh refuses bad settings with exit 2 and a
# message naming the setting, before it needs root or touches a namespace,
# and will not write into a directory that is not its own.
#   tests/tools/torch_pipeline_args_test.sh SOURCE_DIR
set -uo pipefail
script=$1/examples/torch-pipeline/run.sh
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/expect_exit2.sh"
expect_exit2 "rate not a number" "RATE_MBIT = 'fast'" env RATE_MBIT=fast bash "$script" "$scratch/out"
expect_exit2 "burst not a number" "BURST_KB = '64kb'" env BURST_KB=64kb bash "$script" "$scratch/out"
expect_exit2 "gso not 0 or 1" "GSO = 'on'" env GSO=on bash "$script" "$scratch/out"
expect_exit2 "unpaced connections not 0 or 1" "UNPACED_CONNECTIONS = 'yes'" env UNPACED_CONNECTIONS=yes bash "$script" "$scratch/out"
expect_exit2 "one stage" "STAGES = '1': expected 2..8" env STAGES=1 bash "$script" "$scratch/out"
expect_exit2 "zero runs" "RUNS = '0'" env RUNS=0 bash "$script" "$scratch/out"
expect_exit2 "an unknown competitor" "COMPETITION = 'netem'" env COMPETITION="none netem" bash "$script" "$scratch/out"
expect_exit2 "an unknown communication" "COMMS = 'nccl'" env COMMS="safs nccl" bash "$script" "$scratch/out"
expect_exit2 "an unknown schedule" "SCHEDULES = 'zb-v'" env SCHEDULES="1f1b zb-v" bash "$script" "$scratch/out"
expect_exit2 "an unknown congestion control" "CC = 'vegas-ng': expected one of what this host allows" env CC=vegas-ng bash "$script" "$scratch/out"
expect_exit2 "tcp samples not 0 or 1" "TCP_SAMPLES = 'on'" env TCP_SAMPLES=on bash "$script" "$scratch/out"
expect_exit2 "idle restart not 0 or 1" "TCP_IDLE_RESTART = 'off': expected 0 or 1" env TCP_IDLE_RESTART=off bash "$script" "$scratch/out"
expect_exit2 "a queue not in KB" "QUEUE_KB = '1m': expected 1 to 999999 KB" env QUEUE_KB=1m bash "$script" "$scratch/out"
expect_exit2 "a rate past what tc takes" "RATE_MBIT = '99999999999999999999': expected at most" \
  env RATE_MBIT=99999999999999999999 bash "$script" "$scratch/out"
expect_exit2 "a burst past what tc takes" "BURST_KB = '4194304': expected at most" \
  env BURST_KB=4194304 bash "$script" "$scratch/out"
expect_exit2 "micro-batches whose tags meet the gradients'" "MICROBATCHES = '100000': expected at most" \
  env MICROBATCHES=100000 bash "$script" "$scratch/out"
expect_exit2 "no schedule at all" "SCHEDULES = ' ': expected one or more" env SCHEDULES=" " bash "$script" "$scratch/out"
expect_exit2 "no communication at all" "COMMS = ' ': expected one or more" env COMMS=" " bash "$script" "$scratch/out"
expect_exit2 "an option for a directory" "OUT_DIR = '-x': expected a directory" bash "$script" -x
expect_exit2 "a second argument" "2 arguments, expected at most 1" bash "$script" "$scratch/out" more
if ! bash "$script" --help | grep -q "RATE_MBIT"; then
  echo "FAIL: --help does not print the settings"
  failures=$((failures + 1))
fi
mkdir -p "$scratch/out" && echo mine >"$scratch/out/notes.txt"
expect_exit2 "someone else's directory" "is not an earlier run's output" env bash "$script" "$scratch/out"
[[ $(cat "$scratch/out/notes.txt") == mine ]] || { echo "FAIL: notes.txt changed"; failures=$((failures + 1)); }
exit $((failures > 0))
