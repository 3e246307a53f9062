# shellcheck shell=bash
# Sourced by the argument tests of the scripts: `expect_exit2 WHAT MESSAGE
# COMMAND...` runs COMMAND and counts a failure in $failures unless it ends
# with exit 2 and MESSAGE somewhere in its output.
failures=0
expect_exit2() {  # WHAT MESSAGE COMMAND...
  local what=$1 message=$2
  shift 2
  local output code=0
  output=$("$@" 2>&1) || code=$?
  if [[ $code -eq 2 && $output == *"$message"* ]]; then
    echo "ok: $what"
  else
    echo "FAIL: $what (exit $code): $output"
    failures=$((failures + 1))
  fi
}
