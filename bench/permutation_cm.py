#!/usr/bin/env python3
"""Writes an htsim connection matrix (.cm): every host of N sends one flow of
SIZE bytes to another, a random permutation that is one cycle through all
hosts (Sattolo's algorithm, Python's random.Random(SEED)), all starting at 0.
safs-sim runs it with [connection_matrix] (bench/fattree-permutation.toml)
and htsim with -tm, so both simulate the same traffic.

usage: bench/permutation_cm.py OUT.cm [N=1024] [SIZE=2000000] [SEED=1]
"""
import os
import random
import sys


def main(argv):
    if not 2 <= len(argv) <= 5:
        sys.stderr.write(__doc__)
        return 2
    out = argv[1]
    try:
        n, size, seed = (int(a) for a in (argv[2:] + ["1024", "2000000", "1"][len(argv) - 2:]))
    except ValueError as e:
        sys.stderr.write(f"permutation_cm: expected integers N, SIZE, SEED: {e}\n")
        return 2
    # A fat tree of k = 128 has 524,288 hosts; flows are held to 1e15 bytes.
    if not 2 <= n <= 1_000_000 or not 1 <= size <= 10**15:
        sys.stderr.write("permutation_cm: N must be 2 to 1,000,000 and SIZE 1 to 1e15 bytes\n")
        return 2
    if os.path.exists(out):
        sys.stderr.write(f"permutation_cm: {out} exists; not overwriting it\n")
        return 2
    rng = random.Random(seed)
    dst = list(range(n))
    for i in range(n - 1, 0, -1):
        j = rng.randrange(i)
        dst[i], dst[j] = dst[j], dst[i]
    try:
        os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
        with open(out, "x") as f:
            f.write(f"Nodes {n}\nConnections {n}\n")
            for h in range(n):
                f.write(f"{h}->{dst[h]} id {h + 1} start 0 size {size}\n")
    except OSError as e:
        sys.stderr.write(f"permutation_cm: {out}: cannot be written: {e.strerror}\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
