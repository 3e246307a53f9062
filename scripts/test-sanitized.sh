#!/usr/bin/env bash
# Builds everything with AddressSanitizer and UndefinedBehaviorSanitizer
# (any report fails the test that triggered it) in build-sanitize/ and runs
# the test suite there. Tests labelled `timing` (they measure wall-clock
# rates, which the sanitizers' 2-5x slowdown would distort) are excluded;
# the plain build runs them (scripts/test.sh). MPI is left out here (its
# libraries keep allocations to exit, which LeakSanitizer reports), so the
# two-rank sweep test skips; the plain build runs it. So is the Python module
# (an instrumented extension cannot load into an uninstrumented python3), so
# its tests skip here too. SAFS_SANITIZED=1 tells the tests that repeat a
# data check (the evaluation matrix at every level) to do it once. Extra
# arguments go to ctest.
# Run scripts/setup.sh first (it installs the packages).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="$root/build-sanitize"
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSAFS_BUILD_BENCH=OFF -DSAFS_WITH_MPI=OFF -DSAFS_BUILD_PYTHON=OFF \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DSAFS_TEST_COMPILE_OPTIONS=-O0 -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build "$build" -j "$(nproc)" >&2
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:strict_string_checks=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export SAFS_SANITIZED=1
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -LE timing "$@"
