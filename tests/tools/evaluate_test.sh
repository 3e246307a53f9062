#!/usr/bin/env bash
# tools/evaluate: bad input ends with exit 2 and a message naming it; a tiny
# matrix runs, reports means with confidence intervals and a verdict, and a
# second run reuses every finished point; a level that extends another
# applies both; tools/compare-levels tells agreeing runs from differing ones;
# every cell of the repository's matrix is valid at every level. Usage: evaluate_test.sh SAFS_SIM SOURCE_DIR
set -euo pipefail
sim=$1 source_dir=$2
evaluate=$source_dir/tools/evaluate
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
check() {  # description, then a command that must succeed
  local what=$1
  shift
  if "$@"; then echo "ok: $what"; else echo "FAILED: $what"; failures=$((failures + 1)); fi
}
expect_bad() {  # description, expected text, then evaluate's arguments
  local what=$1 text=$2
  shift 2
  local code=0
  "$evaluate" --sim "$sim" "$@" >"$work/out.log" 2>&1 || code=$?
  check "$what: exit 2" test "$code" -eq 2
  check "$what: names it" grep -q -- "$text" "$work/out.log"
}

# A matrix of two transports on a short incast, two seeds (the incast has no
# randomness, so the interval is zero), and one with a deliberately bad cell.
cp "$source_dir/scenarios/examples/incast.toml" "$work/incast.toml"
cat >"$work/matrix.toml" <<'TOML'
transports = ["dctcp", "safs"]
[level.full]
seeds = 2
[[scenario]]
name = "incast"
file = "incast.toml"
metric = "flows.last_finish_s"
label = "last completion (ms)"
scale = 1000
extra = ["flows.fct_mean_s:mean FCT (ms):1000"]
[[scenario.variant]]
name = "4 MiB"
[[scenario.variant]]
name = "1 MiB"
set = ["flows[0].size_bytes=1048576"]
TOML
check "tiny matrix runs" "$evaluate" --sim "$sim" --matrix "$work/matrix.toml" --out "$work/out" --jobs 2
check "matrix.csv has a row per cell" test "$(wc -l <"$work/out/matrix.csv")" -eq 5
check "report has a verdict per variant" test "$(grep -c '^| incast |' "$work/out/matrix.md")" -eq 2
check "report shows the interval" grep -q ' ± 0.000 | 2 |' "$work/out/matrix.md"
before=$(stat -c %Y "$work/out/incast/4-MiB/safs/seed=1/summary.json")
sleep 1
check "rerun succeeds" "$evaluate" --sim "$sim" --matrix "$work/matrix.toml" --out "$work/out" --jobs 2
check "rerun reuses finished points" \
  test "$(stat -c %Y "$work/out/incast/4-MiB/safs/seed=1/summary.json")" -eq "$before"

cp "$work/out/matrix.csv" "$work/ran.csv"
check "--no-run reports the finished cells" \
  "$evaluate" --sim "$sim" --matrix "$work/matrix.toml" --out "$work/out" --no-run
check "--no-run gives the same matrix.csv" cmp -s "$work/out/matrix.csv" "$work/ran.csv"
# A cell is judged only on every seed, each with its workload finished; one
# with a seed missing, or one whose workload stopped at stop_ms, is named
# without a result instead (exit 1).
cp -r "$work/out" "$work/partial"
sed -i '$d' "$work/partial/incast/1-MiB/dctcp/sweep.csv"
/usr/bin/python3 - "$work/partial/incast/4-MiB/safs/seed=2/summary.json" <<'PY'
import json, sys
with open(sys.argv[1]) as f:
    summary = json.load(f)
summary["compute"] = {"finished": False}
with open(sys.argv[1], "w") as f:
    json.dump(summary, f)
PY
code=0
"$evaluate" --sim "$sim" --matrix "$work/matrix.toml" --out "$work/partial" --no-run \
  >"$work/partial.log" 2>&1 || code=$?
check "cells without every seed: exit 1" test "$code" -eq 1
check "a missing seed is named" grep -qx -- '- incast / 1 MiB / dctcp (1 of 2 seeds)' "$work/partial/matrix.md"
check "an unfinished workload is named" grep -qx -- \
  '- incast / 4 MiB / safs (seed=2: its compute workload did not finish by stop_ms)' "$work/partial/matrix.md"
check "no verdict from them" bash -c "! grep -q '^| incast | 1 MiB | dctcp' '$work/partial/matrix.md'"
# A best other transport at 0 (nothing to divide by) is said, not a crash.
cp -r "$work/out" "$work/zero"
awk -F, -v OFS=, 'NR > 1 {$3 = 0} 1' "$work/out/incast/4-MiB/dctcp/sweep.csv" \
  >"$work/zero/incast/4-MiB/dctcp/sweep.csv"
check "a best other at 0 reports" "$evaluate" --sim "$sim" --matrix "$work/matrix.toml" \
  --out "$work/zero" --no-run
check "and says so" grep -q '| incast | 4 MiB | dctcp | - | dctcp at 0, SAFS at ' "$work/zero/matrix.md"
# Compared by difference, a tie is level, not ahead.
sed 's/^scale = 1000$/scale = 1000\ncompare = "difference"/' "$work/matrix.toml" >"$work/difference.toml"
cp -r "$work/out" "$work/tie"
cp "$work/out/incast/4-MiB/dctcp/sweep.csv" "$work/tie/incast/4-MiB/safs/sweep.csv"
check "a tie by difference reports" "$evaluate" --sim "$sim" --matrix "$work/difference.toml" \
  --out "$work/tie" --no-run
check "as level" grep -q '| incast | 4 MiB | dctcp | 0.000 (difference) | SAFS level with dctcp |' \
  "$work/tie/matrix.md"
# A bad --set, or a simulator that does not run, ends before any cell runs,
# and an earlier run's matrix stays as it was.
expect_bad "a bad --set" "nothing was run" --matrix "$work/matrix.toml" --out "$work/out" \
  --set transport.safs.bogus=1
check "a bad --set leaves matrix.csv" cmp -s "$work/out/matrix.csv" "$work/ran.csv"
code=0
"$evaluate" --sim /bin/false --matrix "$work/matrix.toml" --out "$work/out" >"$work/false.log" 2>&1 ||
  code=$?
check "a simulator that does not run: exit 2" test "$code" -eq 2
check "a simulator that does not run leaves matrix.csv" cmp -s "$work/out/matrix.csv" "$work/ran.csv"
code=0
"$evaluate" --sim "$sim" --matrix "$work/matrix.toml" --out "$work/empty" --no-run \
  >"$work/empty.log" 2>&1 || code=$?
check "--no-run with nothing run: exit 1" test "$code" -eq 1
check "--no-run lists what was not run" grep -q '^- incast / 4 MiB / dctcp (not run)' "$work/empty/matrix.md"
echo "my notes" >"$work/notes.md"
expect_bad "report over a file without markers" "refusing to overwrite" \
  --matrix "$work/matrix.toml" --out "$work/out" --report "$work/notes.md"
check "the user's file is untouched" grep -qx "my notes" "$work/notes.md"
mkdir "$work/users"
echo "name,grade" >"$work/users/matrix.csv"
expect_bad "an OUT with a matrix.csv of the user's" "matrix.csv exists and is not this tool's" \
  --matrix "$work/matrix.toml" --out "$work/users" --no-run
check "the user's matrix.csv is untouched" grep -qx "name,grade" "$work/users/matrix.csv"
rm "$work/users/matrix.csv"
echo "my notes" >"$work/users/matrix.md"
expect_bad "an OUT with a matrix.md of the user's" "refusing to overwrite" \
  --matrix "$work/matrix.toml" --out "$work/users" --no-run
expect_bad "an OUT that is a file" "exists and is not a directory" \
  --matrix "$work/matrix.toml" --out "$work/notes.md" --no-run
printf 'intro\n<!-- matrix:begin -->\nold\n<!-- matrix:end -->\nafter\n' >"$work/doc.md"
chmod 640 "$work/doc.md"
check "report spliced between markers" "$evaluate" --sim "$sim" --matrix "$work/matrix.toml" \
  --out "$work/out" --report "$work/doc.md"
check "text around the markers kept" \
  test "$(head -1 "$work/doc.md")$(tail -1 "$work/doc.md")" = "introafter"
check "old matrix replaced" bash -c "! grep -qx old '$work/doc.md' && grep -q '^| incast |' '$work/doc.md'"
check "the document keeps its mode" test "$(stat -c %a "$work/doc.md")" = 640
check "no temporary file left beside it" test -z "$(find "$work" -maxdepth 1 -name '*.tmp')"
# Prose that quotes the markers inside a line is not where the report goes.
printf 'quoting `<!-- matrix:begin -->` in prose\n<!-- matrix:begin -->\nold\n<!-- matrix:end -->\nafter\n' \
  >"$work/quoted.md"
check "report spliced at the marker lines, not the quote" "$evaluate" --sim "$sim" \
  --matrix "$work/matrix.toml" --out "$work/out" --report "$work/quoted.md"
check "the quoting line is kept whole" \
  grep -qx 'quoting `<!-- matrix:begin -->` in prose' "$work/quoted.md"
check "the quoted report replaced old" bash -c "! grep -qx old '$work/quoted.md' && grep -q '^| incast |' '$work/quoted.md'"
# One transport with one knob changed, into its own directory.
check "--transport with --set runs" "$evaluate" --sim "$sim" --matrix "$work/matrix.toml" \
  --out "$work/narrow" --transport safs --set transport.safs.grant_background=false
check "only that transport ran" test ! -e "$work/narrow/incast/4-MiB/dctcp"
check "--set reached the runs" \
  grep -q 'transport.safs.grant_background=false' "$work/narrow/incast/4-MiB/safs/seed=1/summary.json"
check "the report names the narrowing" \
  grep -q -- '--transport safs --set transport.safs.grant_background=false' "$work/narrow/matrix.md"
check "--set wins over the variant's set of the same key" "$evaluate" --sim "$sim" \
  --matrix "$work/matrix.toml" --out "$work/wins" --transport dctcp --set flows[0].size_bytes=2048
check "both variants ran the command line's size" \
  test "$(cat "$work"/wins/incast/*/dctcp/seed=1/flows.csv | awk -F, '$1 == 0 {print $4}' | sort -u)" = 2048
# tools/compare-levels: a run against itself agrees in every cell; against a
# copy in which SAFS took half as long in one cell (where it is worse than
# DCTCP, last to finish an incast), that cell's verdict differs.
compare=$source_dir/tools/compare-levels
"$compare" "$work/out/matrix.csv" "$work/out/matrix.csv" >"$work/same.md"
check "compare-levels: a run agrees with itself" grep -qx 'Same verdict in 2 of 2 cells.' "$work/same.md"
awk -F, -v OFS=, '$2 == "incast" && $3 == "1 MiB" && $4 == "safs" {$10 = $10 * 0.5} 1' \
  "$work/out/matrix.csv" >"$work/faster.csv"
"$compare" "$work/out/matrix.csv" "$work/faster.csv" >"$work/faster.md"
check "compare-levels: the changed cell differs" grep -qx 'Same verdict in 1 of 2 cells.' "$work/faster.md"
check "compare-levels: it is marked" grep -q '^| incast | 1 MiB | dctcp | .* | worse | dctcp | .* | best | no |$' \
  "$work/faster.md"
code=0
cut -d, -f1-9 "$work/out/matrix.csv" >"$work/no-mean.csv"
"$compare" "$work/out/matrix.csv" "$work/no-mean.csv" >"$work/out.log" 2>&1 || code=$?
check "compare-levels: a missing column: exit 2" test "$code" -eq 2
check "compare-levels: names it" grep -q "no-mean.csv: missing column(s) mean" "$work/out.log"
sed '2s/,ratio,/,ratoi,/' "$work/out/matrix.csv" >"$work/typo.csv"
code=0
"$compare" "$work/out/matrix.csv" "$work/typo.csv" >"$work/out.log" 2>&1 || code=$?
check "compare-levels: an unknown compare: exit 2" test "$code" -eq 2
check "compare-levels: names it" grep -q "typo.csv:2: compare 'ratoi'" "$work/out.log"

# A level that extends another applies that one's per-scenario settings first,
# then its own: its own win, and the other's still reach the runs.
cat "$work/matrix.toml" - >"$work/levels.toml" <<'TOML'
[level.base]
seeds = 1
[level.short]
seeds = 1
extends = "base"
TOML
sed -i 's/^metric = /base = ["flows[0].size_bytes=8192", "flows[1].size_bytes=4096"]\nshort = ["flows[0].size_bytes=2048"]\nmetric = /' \
  "$work/levels.toml"
check "a level that extends another runs" "$evaluate" --sim "$sim" --matrix "$work/levels.toml" \
  --out "$work/short" --level short --transport dctcp
check "its own setting wins" \
  test "$(awk -F, '$1 == 0 {print $4}' "$work/short/incast/4-MiB/dctcp/seed=1/flows.csv")" = 2048
check "the extended level's setting applies too" \
  test "$(awk -F, '$1 == 1 {print $4}' "$work/short/incast/4-MiB/dctcp/seed=1/flows.csv")" = 4096
sed 's/^extends = "base"/extends = "none"/' "$work/levels.toml" >"$work/bad-extends.toml"
expect_bad "extends an unknown level" "extends 'none', which is not a level" \
  --matrix "$work/bad-extends.toml" --level short --validate
sed '/^\[level.base\]/a extends = "short"' "$work/levels.toml" >"$work/cycle.toml"
expect_bad "levels that extend each other" "which extends it back" \
  --matrix "$work/cycle.toml" --level short --validate
sed 's/^short = \["flows\[0\].size_bytes=2048"\]/short = "flows[0].size_bytes=2048"/' \
  "$work/levels.toml" >"$work/not-list.toml"
expect_bad "a level's settings not a list" "'short' must be a list" \
  --matrix "$work/not-list.toml" --level short --validate

expect_bad "unknown transport" "no cell of the matrix runs 'tcp'" --matrix "$work/matrix.toml" \
  --transport tcp
expect_bad "--set without a value" "expected KEY=VALUE" --matrix "$work/matrix.toml" --set oops
mkdir "$work/dir.md"
expect_bad "a report that is not a regular file" "dir.md is not a regular file" \
  --matrix "$work/matrix.toml" --report "$work/dir.md"
expect_bad "unknown level" "no level 'fast'" --matrix "$work/matrix.toml" --level fast
expect_bad "unknown scenario" "no scenario 'nope'" --matrix "$work/matrix.toml" --only nope
expect_bad "missing matrix" "cannot read" --matrix "$work/none.toml"
sed 's/^metric = .*//' "$work/matrix.toml" >"$work/no-metric.toml"
expect_bad "missing key" "missing key 'metric'" --matrix "$work/no-metric.toml"
# Values of the wrong type: named, not a traceback.
sed 's/^scale = .*/scale = "abc"/' "$work/matrix.toml" >"$work/bad-scale.toml"
expect_bad "a scale that is not a number" "'scale' must be a finite number" \
  --matrix "$work/bad-scale.toml" --level full
sed 's/^transports = .*/transports = [1]/' "$work/matrix.toml" >"$work/bad-transports.toml"
expect_bad "transports that are not strings" "'transports' must be a list of strings" \
  --matrix "$work/bad-transports.toml" --level full
sed 's/^\[level.full\]/level.ci = 5\n[level.full]/' "$work/matrix.toml" >"$work/bad-level.toml"
expect_bad "a level that is not a table" "level 'ci' must be a table" \
  --matrix "$work/bad-level.toml" --level full
sed 's/incast.toml/gone.toml/' "$work/matrix.toml" >"$work/no-file.toml"
expect_bad "missing scenario file" "file 'gone.toml' does not exist" --matrix "$work/no-file.toml"
sed 's/flows\[0\].size_bytes=1048576/flows[0].size_byte=1/' "$work/matrix.toml" >"$work/bad-key.toml"
expect_bad "bad key in a cell" "did you mean" --matrix "$work/bad-key.toml" --validate

# A failing cell is named, the others finish, the exit code is 1.
sed 's/flows\[0\].size_bytes=1048576/flows[0].size_bytes=0/' "$work/matrix.toml" >"$work/fails.toml"
code=0
"$evaluate" --sim "$sim" --matrix "$work/fails.toml" --out "$work/fails" >"$work/fails.log" 2>&1 || code=$?
check "a failing cell: exit 1" test "$code" -eq 1
check "a failing cell is named" grep -q 'FAILED incast / 1 MiB / safs' "$work/fails.log"
check "the report lists it" grep -q '^- incast / 1 MiB / safs' "$work/fails/matrix.md"
check "the other variant is reported" grep -q '^| incast | 4 MiB |' "$work/fails/matrix.md"

# Every level validates the matrix's data, which the plain build checks. Under
# the sanitizers (scripts/test-sanitized.sh sets SAFS_SANITIZED=1) each
# safs-sim process starts about 8x slower and four levels took most of this
# test's 285 s, so one level there: still every cell through the loader.
levels="full standard quick ci"
if [[ ${SAFS_SANITIZED:-0} == 1 ]]; then levels=full; fi
for level in $levels; do
  check "repository matrix valid at level $level" \
    "$evaluate" --sim "$sim" --validate --level "$level"
done

if ((failures > 0)); then
  echo "$failures check(s) failed"
  exit 1
fi
