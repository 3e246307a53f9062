# shellcheck shell=bash
# Sourced by the argument tests of the scripts: `expect_exit2 WHAT MESSAGE
# COMMAND...` runs COMMAND and counts a failure in $failures unless it ends
# with exit 2 and MESSAGE somewhere in its output. `expect_exit2_without
# TEXT WHAT MESSAGE COMMAND...` also fails if TEXT appears in the output
# (e.g. the line that says a run started).
failures=0
expect_exit2_without() {  # TEXT WHAT MESSAGE COMMAND...
  local forbidden=$1 what=$2 message=$3
  shift 3
  local output code=0
  output=$("$@" 2>&1) || code=$?
  if [[ $code -eq 2 && $output == *"$message"* && (-z $forbidden || $output != *"$forbidden"*) ]]; then
    echo "ok: $what"
  else
    echo "FAIL: $what (exit $code; expected 2, '$message'${forbidden:+ and no '$forbidden'}): $output"
    failures=$((failures + 1))
  fi
}
expect_exit2() {  # WHAT MESSAGE COMMAND...
  expect_exit2_without "" "$@"
}
