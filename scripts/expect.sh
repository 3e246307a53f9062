# shellcheck shell=bash
# Sourced by the testbed scripts: `expect NAME VALUE REGEX WHAT` ends the
# script with exit 2 and "PREFIX: NAME = 'VALUE': expected WHAT" on stderr
# unless VALUE matches REGEX (PREFIX: $expect_prefix, set before);
# `expect_at_most NAME VALUE MAX WHAT` does the same unless VALUE, whole
# digits already checked, is at most MAX (compared as text: no arithmetic,
# which would wrap a long VALUE around).
expect() {  # NAME VALUE REGEX WHAT
  [[ $2 =~ $3 ]] || {
    echo "${expect_prefix:?}: $1 = '$2': expected $4" >&2
    exit 2
  }
}

expect_at_most() {  # NAME VALUE MAX WHAT
  local value=${2#"${2%%[!0]*}"}  # without leading zeros
  if ((${#value} > ${#3})) || { ((${#value} == ${#3})) && [[ $value > $3 ]]; }; then
    echo "${expect_prefix:?}: $1 = '$2': expected $4" >&2
    exit 2
  fi
}

# `expect_no_more_arguments COUNT MAX USAGE`: a script given more than MAX
# positional arguments ends with exit 2 and its usage line.
expect_no_more_arguments() {  # COUNT MAX USAGE
  if (($1 > $2)); then
    echo "${expect_prefix:?}: $1 arguments, expected at most $2: $3" >&2
    exit 2
  fi
}

# `expect_executable NAME PATH WHAT`: PATH is a file this shell may run.
expect_executable() {  # NAME PATH WHAT
  if [[ ! -f $2 || ! -x $2 ]]; then
    echo "${expect_prefix:?}: $1 = '$2': expected $3" >&2
    exit 2
  fi
}
