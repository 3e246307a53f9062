#!/usr/bin/env bash
# Builds the control-message decoder's libFuzzer target with clang and runs
# it briefly (SAFS_FUZZ_SECONDS, default 25). Needs clang++ (Debian: clang).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
seconds=${SAFS_FUZZ_SECONDS:-25}
if ! command -v clang++ >/dev/null; then
  echo "fuzz: clang++ not found, skipping" >&2
  exit 0
fi
build="$root/build-fuzz"
CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSAFS_BUILD_FUZZ=ON \
  -DSAFS_BUILD_TESTS=OFF -DSAFS_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target control_decoder_fuzz
corpus="$build/fuzz-corpus"
mkdir -p "$corpus"
"$build/bin/control_decoder_fuzz" -max_total_time="$seconds" -max_len=1024 -print_final_stats=1 \
  "$corpus"
