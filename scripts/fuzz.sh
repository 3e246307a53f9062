#!/usr/bin/env bash
# Builds libFuzzer targets with clang and runs each briefly
# (SAFS_FUZZ_SECONDS each, default 25). Arguments name the targets; without
# any, the runtime's: the control-message decoder and the authenticated
# handshake. scenario_loader_fuzz fuzzes the simulator's scenario loader,
# seeded with scenarios/. Needs clang++ (Debian: clang) and libsodium-dev.
#   scripts/fuzz.sh                        # the runtime's targets
#   scripts/fuzz.sh scenario_loader_fuzz   # the scenario loader
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${SAFS_FUZZ_SECONDS:-25}
if ! command -v clang++ >/dev/null; then
  echo "fuzz: clang++ not found, skipping" >&2
  exit 0
fi
build="$root/build-fuzz"
all=(control_decoder_fuzz handshake_fuzz scenario_loader_fuzz)
runtime=(control_decoder_fuzz handshake_fuzz)
targets=("${@:-${runtime[@]}}")
for target in "${targets[@]}"; do
  [[ " ${all[*]} " == *" $target "* ]] || {
    echo "fuzz: unknown target '$target'; expected one of: ${all[*]}" >&2
    exit 2
  }
done
CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSAFS_BUILD_FUZZ=ON \
  -DSAFS_BUILD_TESTS=OFF -DSAFS_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
for target in "${targets[@]}"; do
  corpus="$build/fuzz-corpus/$target"
  mkdir -p "$corpus"
  seeds=() max_len=1024
  if [[ $target == scenario_loader_fuzz ]]; then
    seeds=("$root/scenarios") max_len=16384
  fi
  # -timeout: an input that takes seconds is a hang worth reporting.
  "$build/bin/$target" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 \
    -print_final_stats=1 "$corpus" "${seeds[@]}"
done
