#!/usr/bin/env bash
# scripts/announce-warnings.sh and scripts/grant-reasons.sh refuse a bad
# level, extra arguments or a bad knob with exit 2 before they run anything;
# their tables (scripts/mechanism_table.py) name a directory that is not a
# run of the matrix, or a run without the counts (exit 2), and turn the
# counts of a run into the shares they print (with grants on ACKs too);
# scripts/afd_shallow_table.py
# prints a sweep's mean with its interval, or says it had one seed.
#   tests/tools/mechanism_scripts_test.sh SOURCE_DIR
set -uo pipefail
source_dir=$1
script=$source_dir/scripts/announce-warnings.sh
source "$(dirname "${BASH_SOURCE[0]}")/expect_exit2.sh"
expect_exit2_without "into out/" "an unknown level" "level 'fast'" bash "$script" fast
expect_exit2_without "into out/" "two arguments" "expected at most 1" bash "$script" standard quick
grants=$source_dir/scripts/grant-reasons.sh
expect_exit2_without "into out/" "grant-reasons: an unknown level" "level 'fast'" bash "$grants" fast
expect_exit2_without "into out/" "grant-reasons: a knob without a value" \
  "'background_streams': expected a SAFS knob as KNOB=VALUE" bash "$grants" standard background_streams
expect_exit2_without "into out/" "grant-reasons: an unknown knob" "no_such_knob" \
  bash "$grants" standard no_such_knob=1
expect_exit2_without "into out/" "grant-reasons: its own knob" "this script's own" \
  bash "$grants" standard report_grant_reasons=false

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
table() { (cd "$source_dir" && /usr/bin/python3 scripts/mechanism_table.py announcements "$@"); }
expect_exit2 "an unknown table" "usage: mechanism_table.py" \
  bash -c "cd '$source_dir' && /usr/bin/python3 scripts/mechanism_table.py queues '$work'"
expect_exit2 "an empty directory" "no SCENARIO/VARIANT/safs cells" table "$work"
cell=$work/zb-dc/web-search-30/safs
mkdir -p "$cell/seed=1" "$cell/seed=2"
expect_exit2 "cells without a finished run" "no finished run" table "$work"
echo '{"transport_stats": {"data_packets": 1}, "urgent": {}}' >"$cell/seed=1/summary.json"
expect_exit2 "a run without announce_ahead" "seed=1/summary.json: no transport_stats.announcements" table "$work"

summary() {  # announced infeasible given_up on_plans warned_late warned_on_time unwarned_late unwarned_on_time
  printf '{"transport_stats": {"announcements": %d, "announcements_infeasible": %d,
    "announcements_given_up": %d, "flows_on_plans": %d, "announcements_dropped": 0,
    "announced_warned_late": %d, "announced_warned_on_time": %d,
    "announced_unwarned_late": %d, "announced_unwarned_on_time": %d}}\n' "$@"
}
summary 100 10 0 90 8 2 2 88 >"$cell/seed=1/summary.json"
summary 300 50 6 240 40 10 18 226 >"$cell/seed=2/summary.json"
output=$(table "$work" 2>&1)
# Means per run: 200 announced, 30 infeasible (15%), 3 given up (1.5%),
# 165 under their plan (82.5%); of 197 that ended, 34 late (17.3%); of 30
# warned, 24 late (80%); of 34 late, 24 warned (70.6%).
expected="| zb-dc | web-search-30 | 2 | 200 | 15.0% | 1.5% | 82.5% | 0 | 17.3% | 80.0% | 70.6% |"
if [[ $output == *"$expected"* ]]; then
  echo "ok: the table of two runs"
else
  echo "FAIL: the table of two runs: expected '$expected' in: $output"
  failures=$((failures + 1))
fi

grants_table() { (cd "$source_dir" && /usr/bin/python3 scripts/mechanism_table.py grants "$@"); }
expect_exit2 "grants: a run without report_grant_reasons" \
  "(a run with transport.safs.report_grant_reasons = true writes it)" \
  grants_table "$work"
reasons=(first increase decrease priority resume refresh)
grant_summaries() {  # EXTRA: more transport_stats fields, each with its leading ", "
  {
    printf '{"transport_stats": {"scheduling_packets": 400, "data_packets": 20000%s' "$1"
    for i in "${!reasons[@]}"; do
      printf ', "grants_urgent_%s": %d, "grants_background_%s": %d' \
        "${reasons[$i]}" $((10 * (i + 1))) "${reasons[$i]}" $((i == 0 ? 10 : 0))
    done
    printf '}}\n'
  } | tee "$cell/seed=1/summary.json" >"$cell/seed=2/summary.json"
}
grant_summaries ""
output=$(grants_table "$work" 2>&1)
# 2 per 100 data; urgent grants 10, 20, ..., 60 of 400; background first
# 10; the other 180 not grants.
expected="| zb-dc | web-search-30 | 2 | 2.00 | 2.5% | 5.0% | 7.5% | 10.0% | 12.5% | 15.0% | 2.5% |"
expected+=" 0.0% | 0.0% | 0.0% | 0.0% | 0.0% | 45.0% |"
if [[ $output == *"$expected"* ]]; then
  echo "ok: the grants table"
else
  echo "FAIL: the grants table: expected '$expected' in: $output"
  failures=$((failures + 1))
fi
# With grants on ACKs the shares are of every scheduling message: the 400
# sent alone, 500 on ACKs and 100 held and never sent; the rate is of the
# packets alone.
grant_summaries ', "grants_on_acks": 500, "held_grants_not_sent": 100'
output=$(grants_table "$work" 2>&1)
expected="| zb-dc | web-search-30 | 2 | 2.00 | 1.0% | 2.0% | 3.0% | 4.0% | 5.0% | 6.0% | 1.0% |"
expected+=" 0.0% | 0.0% | 0.0% | 0.0% | 0.0% | 78.0% |"
if [[ $output == *"$expected"* ]]; then
  echo "ok: the grants table with grants on ACKs"
else
  echo "FAIL: the grants table with grants on ACKs: expected '$expected' in: $output"
  failures=$((failures + 1))
fi

# scripts/afd_shallow_table.py: the mean and interval over a sweep's seeds,
# and no interval for one seed (not a zero-width one).
shallow() { (cd "$source_dir" && /usr/bin/python3 scripts/afd_shallow_table.py one drops "$@"); }
mkdir -p "$work/one-seed" "$work/two-seeds"
printf 'seed,inference.tpot_p99_ms,network.queue_drops\n1,41.5,7\n' >"$work/one-seed/sweep.csv"
printf 'seed,inference.tpot_p99_ms,network.queue_drops\n1,41,6\n2,43,8\n' >"$work/two-seeds/sweep.csv"
output=$(shallow "$work/one-seed|one" "$work/two-seeds|two" 2>&1)
# Two seeds: 42 ± t(0.975, 1) 12.706 x stdev 1.414 / sqrt 2 = 12.706.
for expected in "| one | 41.500 (one seed) | 7 |" "| two | 42.000 ± 12.706 | 7 |"; do
  if [[ $output == *"$expected"* ]]; then
    echo "ok: afd_shallow_table.py prints '$expected'"
  else
    echo "FAIL: afd_shallow_table.py: expected '$expected' in: $output"
    failures=$((failures + 1))
  fi
done
exit $((failures > 0))
