#!/usr/bin/env bash
# Builds the libFuzzer targets with clang and runs each briefly
# (SAFS_FUZZ_SECONDS each, default 25): the control-message decoder and the
# authenticated handshake. Needs clang++ (Debian: clang) and libsodium-dev.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${SAFS_FUZZ_SECONDS:-25}
if ! command -v clang++ >/dev/null; then
  echo "fuzz: clang++ not found, skipping" >&2
  exit 0
fi
build="$root/build-fuzz"
targets=(control_decoder_fuzz handshake_fuzz)
CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSAFS_BUILD_FUZZ=ON \
  -DSAFS_BUILD_TESTS=OFF -DSAFS_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"
for target in "${targets[@]}"; do
  corpus="$build/fuzz-corpus/$target"
  mkdir -p "$corpus"
  "$build/bin/$target" -max_total_time="$seconds" -max_len=1024 -print_final_stats=1 "$corpus"
done
