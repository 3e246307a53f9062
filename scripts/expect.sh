# shellcheck shell=bash
# Sourced by the testbed scripts: `expect NAME VALUE REGEX WHAT` ends the
# script with exit 2 and "PREFIX: NAME = 'VALUE': expected WHAT" on stderr
# unless VALUE matches REGEX (PREFIX: $expect_prefix, set before).
expect() {  # NAME VALUE REGEX WHAT
  [[ $2 =~ $3 ]] || {
    echo "${expect_prefix:?}: $1 = '$2': expected $4" >&2
    exit 2
  }
}
