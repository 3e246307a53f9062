"""The tensors the stages waited for, per cell, from run.sh output directories.

    python3 tensors.py OUT_DIR [OUT_DIR ...]

For each cell (schedule, communication, competitor), over every run in every
directory given: how many tensors a stage waited for at least 1 ms, and the
mean, median, 90th percentile and largest time from the sender's isend to
the end of that wait, in ms (report.waited_transfers). The report's table
gives the median alone; a tail shows here.
"""

import statistics
import sys
from collections import defaultdict

from report import runs, waited_transfers


def main(argv):
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    cells = defaultdict(list)
    for out in argv:
        found = list(runs(out))
        if not found:
            print(f"tensors.py: {out}: no run's *.rank0.json here (a run.sh output directory?)",
                  file=sys.stderr)
            return 2
        for key, _run, _name, ranks in found:
            cells[key] += waited_transfers(ranks)
    print("| schedule | communication | competitor | tensors | mean (ms) | median (ms) "
          "| 90th percentile (ms) | largest (ms) |")
    print("|---|---|---|---:|---:|---:|---:|---:|")
    for (schedule, comm, competition), seconds in cells.items():
        if not seconds:
            print(f"| {schedule} | {comm} | {competition} | 0 | - | - | - | - |")
            continue
        ms = sorted(s * 1000 for s in seconds)
        p90 = ms[int(0.9 * len(ms))] if len(ms) > 1 else ms[0]
        print(f"| {schedule} | {comm} | {competition} | {len(ms)} | {statistics.mean(ms):.1f} "
              f"| {statistics.median(ms):.1f} | {p90:.1f} | {ms[-1]:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
