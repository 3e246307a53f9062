#!/usr/bin/env python3
"""Prints the paper's headline claims next to what our runs measured.

Reads out/zb-training/results.csv, out/afd-16a2f/results.csv and
out/incast-micro/*/summary.json (written by scripts/zb-training.sh,
scripts/afd-16a2f.sh and scripts/incast-micro.sh) and prints one markdown
table. Every number comes from those files; nothing is typed in here except
the paper's own figures.
"""
import csv
import json
import sys


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main():
    zb = rows("out/zb-training/results.csv")
    afd = {r["transport"]: r for r in rows("out/afd-16a2f/results.csv")}
    it = {}
    for r in zb:
        if r["iteration_ms"].startswith("unfinished"):
            sys.exit("paper-compare: a training run did not finish; raise simulation.stop_ms")
        it.setdefault(r["transport"], {})[int(r["k"])] = float(r["iteration_ms"])
    # ZeroBubble: is SAFS best or close to best at every k, and its largest
    # reduction against each other transport (over k).
    worst_gap = 0.0
    for k in range(6):
        best = min(v[k] for v in it.values())
        worst_gap = max(worst_gap, it["safs"][k] / best - 1)
    cuts = []
    for t in sorted(it):
        if t != "safs":
            cut, at = max((1 - it["safs"][k] / it[t][k], k) for k in range(6))
            cuts.append(f"{100 * cut:.1f}% vs {t} (k = {at})")
    p99 = {t: float(r["tpot_p99_ms"]) for t, r in afd.items()}

    def below(t):
        return 100 * (1 - p99["safs"] / p99[t])

    print("| claim | paper | here |")
    print("|---|---|---|")
    print(f"| ZB training: SAFS best or close to best for k = 0..5 | yes | within "
          f"{100 * worst_gap:.1f}% of the best transport at every k |")
    print(f"| ZB training: largest iteration-time reduction | up to 38.7% | "
          f"{', '.join(cuts)} |")
    print(f"| 16A2F: SAFS p99 TPOT below D2TCP | 38.7% | {below('d2tcp'):.1f}% |")
    print(f"| 16A2F: SAFS p99 TPOT below Homa | 66.2% | {below('homa'):.1f}% |")
    micro = {}
    for run in ("safs", "safs-urgent-first"):
        with open(f"out/incast-micro/{run}/summary.json") as f:
            micro[run] = json.load(f)["urgent"]
    print(f"| Incast microbenchmark: urgent deadline misses | 0 | "
          f"{micro['safs']['missed_deadline']} (urgent_first: "
          f"{micro['safs-urgent-first']['missed_deadline']}) |")
    print(f"| Incast microbenchmark: mean urgent FCT | 14.3 ms | "
          f"{1e3 * micro['safs']['fct_mean_s']:.1f} ms just in time, "
          f"{1e3 * micro['safs-urgent-first']['fct_mean_s']:.1f} ms urgent_first |")


if __name__ == "__main__":
    sys.exit(main())
