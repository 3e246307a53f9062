# shellcheck shell=bash
# Sourced by the experiment scripts, not run on its own: the simulator, the
# transports, and runs and sweeps that keep progress and build output off
# stdout (stdout is the script's table) and say which run a warning came from.
#
# Environment:
#   SAFS_SIM         the safs-sim binary (default build/bin/safs-sim)
#   SAFS_JOBS        points run at once by each sweep (default: the cores)
#   SAFS_TRANSPORTS  comma-separated transports instead of all of them (a
#                    reduced run: fewer rows, the same numbers in each)
#   SAFS_RESUME=1    keep the runs and sweep points that finished before
#                    (to continue an interrupted script; only after no change
#                    to the simulator or the scenarios). Otherwise every run
#                    starts in a fresh directory.

sim=${SAFS_SIM:-build/bin/safs-sim}
# Debian's python3 (where apt puts matplotlib and numpy), else the one on PATH.
python=/usr/bin/python3
[[ -x $python ]] || python=python3
jobs=${SAFS_JOBS:-$(nproc)}
script_name=$(basename "$0" .sh)

# The environment is checked before anything runs (or is emptied): the
# variable, its value and what was expected, exit 2.
bad_environment() {  # NAME WHAT
  echo "$script_name.sh: $1 = '${!1-}': expected $2" >&2
  exit 2
}
[[ ${SAFS_RESUME:-0} =~ ^[01]$ ]] || bad_environment SAFS_RESUME "1 (keep finished runs) or 0"
[[ $jobs =~ ^[1-9][0-9]{0,3}$ ]] || bad_environment SAFS_JOBS "a number of parallel runs, 1 to 9999"
[[ -f $sim && -x $sim ]] || {
  echo "$script_name.sh: SAFS_SIM = '$sim': expected the safs-sim binary (scripts/setup.sh builds it)" >&2
  exit 2
}
if [[ -n ${SAFS_TRANSPORTS:-} ]]; then
  known_transports=$("$sim" transports | awk '{print $1}')
  IFS=, read -r -a wanted_transports <<<"$SAFS_TRANSPORTS"
  [[ $SAFS_TRANSPORTS =~ ^[^,]+(,[^,]+)*$ ]] ||
    bad_environment SAFS_TRANSPORTS "transport names separated by single commas"
  [[ -z $(printf '%s\n' "${wanted_transports[@]}" | sort | uniq -d) ]] ||
    bad_environment SAFS_TRANSPORTS "each transport once"
  for wanted in "${wanted_transports[@]}"; do
    grep -qxF -- "$wanted" <<<"$known_transports" ||
      bad_environment SAFS_TRANSPORTS "transports of '$sim transports', separated by commas"
  done
fi

# Ends the script (status 2) when it was given more than MAX arguments:
#   at_most_arguments MAX "$@"
at_most_arguments() {
  local max=$1
  shift
  if (($# > max)); then
    echo "$script_name.sh: $# argument(s) ($*), expected at most $max (its header says which)" >&2
    exit 2
  fi
}

# Ends the script (status 2) unless SAFS_TRANSPORTS, when set, has every
# transport named (the script compares them): needs_transports NAME...
needs_transports() {
  local name
  [[ -n ${SAFS_TRANSPORTS:-} ]] || return 0
  for name in "$@"; do
    [[ ,$SAFS_TRANSPORTS, == *",$name,"* ]] || bad_environment SAFS_TRANSPORTS "a list with $*"
  done
}

# Ends the script (status 2) unless safs-sim accepts SCENARIO with ARGS
# (--set ...; run before anything is emptied; safs-sim names what is wrong).
expect_scenario() {  # SCENARIO ARGS...
  "$sim" validate "$@" >/dev/null || exit 2
}

# Every transport, one a line (or those of SAFS_TRANSPORTS).
transports() {
  if [[ -n ${SAFS_TRANSPORTS:-} ]]; then
    tr , '\n' <<<"$SAFS_TRANSPORTS"
  else
    "$sim" transports | awk '{print $1}'
  fi
}

# afd-shallow at the matrix's standard level (scenarios/eval/matrix.toml):
# its scenario file, its 375 KB ports and the standard run length, four seeds,
# and the metrics its tables show. For the scripts that measure a mechanism
# there (blind-budget.sh, blind-window.sh, tail-loss.sh).
# shellcheck disable=SC2034 # used by the scripts that source this file
afd_shallow_scenario=scenarios/eval/afd-saturated.toml
# shellcheck disable=SC2034
afd_shallow_seeds=1,2,3,4
# shellcheck disable=SC2034
afd_shallow=(--set network.port_buffer_bytes=375000 --set inference.output_tokens_min=4
  --set inference.output_tokens_max=6 --set inference.measured_requests=96)
# shellcheck disable=SC2034
afd_shallow_metrics=(--metric inference.tpot_p99_ms --metric network.queue_drops
  --metric transport_stats.timeouts --metric transport_stats.retransmissions)

# afd_shallow_sweep OUT ARGS...: a sweep of afd-shallow's scenario file
# with ARGS over K = 20, 65 and 100 KB and afd_shallow_seeds (the points
# scripts/afd_shallow_table.py reads).
afd_shallow_sweep() {
  local out=$1
  shift
  sweep "$out" "$afd_shallow_scenario" "$@" --grid network.ecn_threshold_bytes=20000,65000,100000 \
    --grid "simulation.seed=$afd_shallow_seeds"
}

# safs_sets "KEY=VALUE ...": --set arguments for those transport.safs knobs,
# into the array `sets` (afd-knobs.sh, slack-adaptive.sh).
safs_sets() {
  local knob knobs
  read -ra knobs <<<"$1"
  sets=()
  # shellcheck disable=SC2034 # read by the caller
  for knob in "${knobs[@]}"; do sets+=(--set "transport.safs.$knob"); done
}

# One line on stderr, so that a long script shows it is alive.
progress() {
  echo "$script_name: $*" >&2
}

# The file that marks a directory the scripts made (fresh below).
output_mark=.safs-script-output

# Ends the script (status 2) unless DIR is new, empty, or output the
# scripts or safs-sim wrote (their mark, or a run's summary.json), in the
# project's out/ as anywhere else: a directory of the user's is never
# deleted or written over. (Until 2026-12-07 anything under out/ was taken
# as the scripts'; such a directory from before the mark is refused now:
# remove it.) Relative paths are the project's (the scripts run from its top).
expect_own_output() {  # dir
  if [[ -z $1 || $1 == -* ]]; then
    echo "$script_name.sh: output directory '$1': expected a directory (one starting with -" \
      "as ./-...)" >&2
    exit 2
  fi
  if [[ -e $1 && ! -d $1 ]]; then
    echo "$script_name.sh: $1 exists and is not a directory; not replacing it" >&2
    exit 2
  fi
  if [[ -d $1 && ! -e $1/$output_mark && ! -e $1/summary.json && -n $(ls -A "$1") ]]; then
    echo "$script_name.sh: $1 holds files no safs script wrote; not deleting them" \
      "(give a new or empty directory, or remove it)" >&2
    exit 2
  fi
}

# Empties an output directory of this script (kept as it is with
# SAFS_RESUME=1) and marks it as the scripts'.
fresh() {
  expect_own_output "$1"
  if [[ ${SAFS_RESUME:-0} != 1 ]]; then rm -rf "$1"; fi
  mkdir -p "$1" && : >"$1/$output_mark"
}

# SAFS alone in every cell of the evaluation matrix at LEVEL, into a fresh
# RUNS, with the --set overrides given; evaluate's messages go to stderr.
# Ends the script (status 2) on bad input, which evaluate names; otherwise
# matrix_status is evaluate's exit status (1: a cell failed, left out).
#   safs_matrix RUNS LEVEL --set KEY=VALUE...
safs_matrix() {
  local runs=$1 level=$2
  shift 2
  fresh "$runs"
  matrix_status=0
  SAFS_SIM=$sim tools/evaluate --level "$level" --transport safs "$@" \
    --out "$runs" --jobs "$jobs" >&2 || matrix_status=$?
  ((matrix_status != 2)) || exit 2
}

# The evaluation matrix level a script was given (standard when none):
# full, standard, quick or ci; anything else is refused with a message
# (status 2). Use as
# level=$(matrix_level "${1:-}") || exit 2
matrix_level() {
  case ${1:-standard} in
    full | standard | quick | ci) echo "${1:-standard}" ;;
    *)
      echo "$script_name.sh: level '$1': expected full, standard, quick or ci" >&2
      return 2
      ;;
  esac
}

# Prints each line of a run's messages prefixed with the run's directory,
# unless safs-sim already named it (its warnings start with the directory).
attribute() {  # dir, text
  local line
  [[ -z $2 ]] || while IFS= read -r line; do
    if [[ $line == "$1"* ]]; then echo "$line"; else echo "$1: $line"; fi
  done <<<"$2" >&2
}

# run_one DIR ARGS...: safs-sim run ARGS --out DIR, in a fresh DIR.
run_one() {
  local dir=$1 messages status=0
  shift
  if [[ ${SAFS_RESUME:-0} == 1 && -e $dir/summary.json ]]; then
    progress "$dir: done before, kept"
    return 0
  fi
  expect_own_output "$dir"
  rm -rf "$dir"
  progress "running $dir"
  messages=$("$sim" run "$@" --out "$dir" --quiet 2>&1) || status=$?
  attribute "$dir" "$messages"
  return "$status"
}

# sweep OUT ARGS...: safs-sim sweep ARGS --out OUT with SAFS_JOBS points at
# once, into a fresh OUT. Its progress bar (on a terminal) or one line per
# finished point and its final line go to stderr; then the warnings of each
# point it ran, prefixed with the point's directory.
sweep() {
  local out=$1 status=0 log started verbose=()
  shift
  fresh "$out"
  [[ -t 2 ]] || verbose=(--verbose)
  progress "sweeping into $out ($jobs at once)"
  started=$(mktemp)
  "$sim" sweep "$@" --out "$out" --jobs "$jobs" "${verbose[@]}" >&2 || status=$?
  # The points run now (not those kept from before, nor other grids' points
  # in the same directory); a failed point's log was shown by the sweep.
  while IFS= read -r log; do
    if [[ -e $(dirname "$log")/summary.json ]]; then
      attribute "$(dirname "$log")" "$(cat "$log")"
    fi
  done < <(find "$out" -mindepth 2 -maxdepth 2 -name run.log -newer "$started" | sort)
  rm -f "$started"
  return "$status"
}

# The value of one summary metric of one run, as safs-sim compare prints it.
metric() {  # dir, path[:label[:scale]]
  "$sim" compare "$1" --metric "$2" | tail -1 | awk -F'|' '{gsub(/ /, "", $4); print $4}'
}

# Comma-separated list of lines, for a --grid axis.
joined() {
  paste -sd, -
}
