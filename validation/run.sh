#!/usr/bin/env bash
# The fidelity suite: every case in validation/cases in ns-3 and safs-sim,
# one table (docs/validation.md). Options: validation/run.sh --help.
exec /usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/fidelity.py" "$@"
