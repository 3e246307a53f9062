#!/usr/bin/env bash
# bench/permutation_cm.py writes the connection matrix of the side-by-side
# benchmark with htsim, and bench/fattree-permutation.toml runs it: a
# permutation that is one cycle through all hosts, every flow finished.
# Small (k = 4, 16 hosts) so it runs in a second; bad arguments exit 2.
#   tests/tools/permutation_bench_test.sh SAFS_SIM SOURCE_DIR
set -uo pipefail
sim=$1
src=$2
python=/usr/bin/python3
[[ -x $python ]] || python=python3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() {
  echo "FAIL: $*"
  exit 1
}
"$python" "$src/bench/permutation_cm.py" "$scratch/p.cm" 16 20000 || fail "writing the matrix"
# One cycle: following dst from host 0 visits every host before coming back.
"$python" - "$scratch/p.cm" <<'PY' || fail "not one cycle through 16 hosts"
import re, sys
lines = open(sys.argv[1]).read().split("\n")
assert lines[0] == "Nodes 16" and lines[1] == "Connections 16", lines[:2]
dst = {}
for line in lines[2:]:
    if line:
        m = re.fullmatch(r"(\d+)->(\d+) id \d+ start 0 size 20000", line)
        assert m, line
        dst[int(m[1])] = int(m[2])
h, seen = 0, set()
while h not in seen:
    seen.add(h)
    h = dst[h]
assert h == 0 and len(seen) == 16, seen
PY
code=0
"$python" "$src/bench/permutation_cm.py" "$scratch/p.cm" 2>/dev/null || code=$?
[[ $code -eq 2 ]] || fail "overwrote an existing file (exit $code)"
code=0
"$python" "$src/bench/permutation_cm.py" "$scratch/q.cm" sixteen 2>/dev/null || code=$?
[[ $code -eq 2 ]] || fail "took a bad N (exit $code)"
"$sim" run "$src/bench/fattree-permutation.toml" --quiet --set topology.k=4 \
  --set "connection_matrix.file=\"$scratch/p.cm\"" --out "$scratch/run" >/dev/null ||
  fail "the scenario did not run"
grep -q '"completed": 16' "$scratch/run/summary.json" || fail "not every flow finished"
echo "ok: matrix, scenario and bad arguments"
