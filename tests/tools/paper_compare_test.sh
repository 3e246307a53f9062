#!/usr/bin/env bash
# scripts/paper-compare.py before its inputs exist, and with malformed ones:
# exit code 2 and a message naming the file (and the script that makes it),
# never a traceback. Usage: paper_compare_test.sh SOURCE_DIR
set -euo pipefail
compare=$1/scripts/paper-compare.py
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
failures=0 checks=0
expect_error() {  # name, expected message part
  local rc=0
  checks=$((checks + 1))
  python3 "$compare" >/dev/null 2>err.txt || rc=$?
  if ((rc == 2)) && grep -qF -- "$2" err.txt && ! grep -q Traceback err.txt; then
    echo "ok: $1"
  else
    echo "FAILED: $1 (exit $rc, expected 2 and '$2'): $(cat err.txt)"
    failures=$((failures + 1))
  fi
}
zb=out/zb-training/results.csv afd=out/afd-16a2f/results.csv
expect_error "no inputs yet" "$zb: missing; run scripts/zb-training.sh first"
mkdir -p out/zb-training out/afd-16a2f out/incast-micro/sweep/transport=safs \
  out/incast-micro/safs-urgent-first
echo "transport,k,iteration_ms,planned_iteration_ms" >"$zb"
for k in 0 1 2 3 4 5; do echo "safs,$k,240.0,162.0" >>"$zb"; echo "homa,$k,250.0,162.0" >>"$zb"; done
expect_error "afd results missing" "$afd: missing; run scripts/afd-16a2f.sh first"
echo "transport,tpot_p50_ms" >"$afd"
expect_error "afd results without a column" "$afd: no column 'tpot_p99_ms'"
printf 'transport,tpot_p99_ms\nsafs,27.0\nhoma,26.0\n' >"$afd"
expect_error "afd results without d2tcp" "$afd: no row for d2tcp"
printf 'transport,tpot_p99_ms\nsafs,27.0\nhoma,26.0\nd2tcp,28.0\n' >"$afd"
expect_error "incast runs missing" \
  "out/incast-micro/sweep/transport=safs/summary.json: missing; run scripts/incast-micro.sh first"
echo '{"urgent": {"missed_deadline": 0, "fct_mean_s": 0.021}}' \
  >out/incast-micro/sweep/transport=safs/summary.json
echo '{"urgent": ' >out/incast-micro/safs-urgent-first/summary.json
expect_error "malformed summary.json" "safs-urgent-first/summary.json: cannot read"
echo '{"urgent": {"missed_deadline": 0, "fct_mean_s": 0.015}}' \
  >out/incast-micro/safs-urgent-first/summary.json
sed -i 's/^homa,3,250.0/homa,3,fast/' "$zb"
expect_error "non-number in results.csv" "$zb: line 9: column 'iteration_ms' is 'fast'"
sed -i 's/^homa,3,fast/homa,3,250.0/' "$zb"
if python3 "$compare" >table.md && grep -q "within 0.0% of the best" table.md; then
  echo "ok: complete inputs give the table"
else
  echo "FAILED: complete inputs: $(cat table.md err.txt 2>/dev/null)"
  failures=$((failures + 1))
fi
echo "$((checks + 1 - failures)) passed, $failures failed"
((failures == 0))
