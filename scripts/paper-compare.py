#!/usr/bin/env python3
"""Prints the paper's headline claims next to what our runs measured.

Reads out/zb-training/results.csv, out/afd-16a2f/results.csv and the
summary.json of the incast microbenchmark's SAFS runs (written by
scripts/zb-training.sh, scripts/afd-16a2f.sh and scripts/incast-micro.sh) and
prints one markdown table. Every number comes from those files; nothing is
typed in here except the paper's own figures. A missing or malformed input
ends with a message naming the file and the script that makes it, exit 2.
"""
import csv
import json
import sys

EXIT_BAD_INPUT = 2
ZB_CSV = "out/zb-training/results.csv"
AFD_CSV = "out/afd-16a2f/results.csv"
INCAST_RUNS = {  # run name -> its summary.json
    "safs": "out/incast-micro/sweep/transport=safs/summary.json",
    "safs-urgent-first": "out/incast-micro/safs-urgent-first/summary.json",
}
MAKER = {ZB_CSV: "scripts/zb-training.sh", AFD_CSV: "scripts/afd-16a2f.sh"}
MAKER.update({path: "scripts/incast-micro.sh" for path in INCAST_RUNS.values()})
ZB_K = range(6)  # background flows per stage, as scripts/zb-training.sh sweeps them


class BadInput(Exception):
    pass


def missing(path, what):
    when = "first" if what == "missing" else "again"
    return BadInput(f"{path}: {what}; run {MAKER[path]} {when} (scripts/results.sh runs every one)")


def rows(path, columns):
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            result = list(reader)
    except FileNotFoundError:
        raise missing(path, "missing")
    except (OSError, csv.Error, UnicodeDecodeError) as e:
        raise missing(path, f"cannot read ({e})")
    for column in columns:
        if column not in (reader.fieldnames or []):
            raise missing(path, f"no column '{column}' (a file from another version?)")
    if not result:
        raise missing(path, "no rows")
    return result


def number(path, line, column, text):
    try:
        return float(text)
    except ValueError:
        raise BadInput(f"{path}: line {line}: column '{column}' is {text!r}, expected a number")


def summary_value(path, section, key):
    try:
        with open(path) as f:
            value = json.load(f)[section][key]
    except FileNotFoundError:
        raise missing(path, "missing")
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as e:
        raise missing(path, f"cannot read ({e})")
    except (KeyError, TypeError):
        raise missing(path, f"no {section}.{key}")
    if not isinstance(value, (int, float)):
        raise BadInput(f"{path}: {section}.{key} is {value!r}, expected a number")
    return value


def need(table, path, *names):
    for name in names:
        if name not in table:
            raise BadInput(f"{path}: no row for {name} (made with SAFS_TRANSPORTS set?); "
                           f"run {MAKER[path]} for every transport")


def claims():
    it = {}
    for line, r in enumerate(rows(ZB_CSV, ("transport", "k", "iteration_ms")), start=2):
        if r["iteration_ms"].startswith("unfinished"):
            raise BadInput(f"{ZB_CSV}: line {line}: a training run did not finish; "
                           "raise simulation.stop_ms")
        k = int(number(ZB_CSV, line, "k", r["k"]))
        it.setdefault(r["transport"], {})[k] = number(ZB_CSV, line, "iteration_ms",
                                                      r["iteration_ms"])
    need(it, ZB_CSV, "safs")
    for t, by_k in it.items():
        if set(by_k) != set(ZB_K):
            raise BadInput(f"{ZB_CSV}: {t} has k = {sorted(by_k)}, expected k = 0..5")
    afd = {r["transport"]: r for r in rows(AFD_CSV, ("transport", "tpot_p99_ms"))}
    need(afd, AFD_CSV, "safs", "d2tcp", "homa")
    p99 = {t: number(AFD_CSV, "?", "tpot_p99_ms", r["tpot_p99_ms"]) for t, r in afd.items()}
    micro = {run: (summary_value(path, "urgent", "missed_deadline"),
                   summary_value(path, "urgent", "fct_mean_s"))
             for run, path in INCAST_RUNS.items()}

    # ZeroBubble: is SAFS best or close to best at every k, and its largest
    # reduction against each other transport (over k).
    worst_gap = 0.0
    for k in ZB_K:
        best = min(v[k] for v in it.values())
        worst_gap = max(worst_gap, it["safs"][k] / best - 1)
    cuts = []
    for t in sorted(it):
        if t != "safs":
            cut, at = max((1 - it["safs"][k] / it[t][k], k) for k in ZB_K)
            cuts.append(f"{100 * cut:.1f}% vs {t} (k = {at})")

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
    print(f"| Incast microbenchmark: urgent deadline misses | 0 | "
          f"{micro['safs'][0]} (urgent_first: {micro['safs-urgent-first'][0]}) |")
    print(f"| Incast microbenchmark: mean urgent FCT | 14.3 ms | "
          f"{1e3 * micro['safs'][1]:.1f} ms just in time, "
          f"{1e3 * micro['safs-urgent-first'][1]:.1f} ms urgent_first |")


def main():
    try:
        claims()
    except BadInput as e:
        print(f"paper-compare: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return 0


if __name__ == "__main__":
    sys.exit(main())
