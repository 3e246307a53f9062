"""The table of docs/real-pipeline.md from a run.sh output directory.

    python3 report.py OUT_DIR RATE_MBIT

Per cell (schedule, communication, competitor): the iteration time (median
over every measured iteration of every run, and the range), the bubble and
the exposed communication per stage (means), SAFS's deadline misses and
control bytes per iteration, the background's rate into a stage (SAFS:
what the stage's endpoint took while measuring; gloo: what the sink got
over the cell), and the sim-to-real check: safs-sim's
prediction for each run's last iteration against its measurement.
"""

import glob
import json
import os
import statistics
import sys
from collections import defaultdict


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out, rate = argv
    cells = defaultdict(lambda: {"iters": [], "bubble": [], "exposed": [], "misses": 0,
                                 "control": [], "sim": [], "background": []})
    order = []
    for path in sorted(glob.glob(os.path.join(out, "*.rank0.json"))):
        name = os.path.basename(path)[: -len(".rank0.json")]
        schedule, comm, competition, _run = name.split(".")
        key = (schedule, comm, competition)
        if key not in cells:
            order.append(key)
        ranks = [json.load(open(p)) for p in sorted(glob.glob(os.path.join(out, name + ".rank*.json")))]
        cell = cells[key]
        for i in range(len(ranks[0]["iterations"])):
            cell["iters"].append(max(r["iterations"][i]["iteration_s"] for r in ranks))
            cell["bubble"].append(statistics.mean(r["iterations"][i]["bubble_s"] for r in ranks))
            cell["exposed"].append(statistics.mean(r["iterations"][i]["exposed_comm_s"] for r in ranks))
        if "deadline_misses" in ranks[0]:
            cell["misses"] += sum(r["deadline_misses"] for r in ranks)
            cell["control"].append(sum(r["control_bytes"] for r in ranks) / len(ranks[0]["iterations"]))
        if "background_bytes" in ranks[0] and competition == "background":
            cell["background"].append(statistics.mean(
                r["background_bytes"] * 8 / r["measured_s"] / 1e6 for r in ranks))
        sinks = sorted(glob.glob(os.path.join(out, name + ".sink*")))
        if sinks:
            rates = []
            for sink in sinks:
                with open(sink) as f:
                    got, seconds = f.read().split()
                rates.append(int(got) * 8 / float(seconds) / 1e6)
            cell["background"].append(statistics.mean(rates))
        sim_path = os.path.join(out, name + ".sim.json")
        if os.path.exists(sim_path):
            sim = json.load(open(sim_path))
            cell["sim"].append(sim["predicted_iteration_s"] / sim["measured_iteration_s"] - 1)

    print(f"| schedule | communication | competitor | iteration (ms): median [min, max] | "
          f"bubble per stage (ms) | exposed comm per stage (ms) | background into a stage (Mbit/s) "
          f"| SAFS misses | control B/iteration | safs-sim prediction vs measured |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|---|")
    rank = {"gpipe": 0, "1f1b": 1, "zb-h1": 2, "none": 0, "background": 1, "bulk": 2, "bulk-qos": 3,
            "safs": 0, "safs-fresh": 1, "safs-paced": 2, "gloo-preposted": 3, "gloo": 4}
    for key in sorted(order, key=lambda k: (rank.get(k[2], 9), rank.get(k[0], 9), rank.get(k[1], 9))):
        c = cells[key]
        it = [x * 1000 for x in c["iters"]]
        sims = ", ".join(f"{e:+.1%}" for e in c["sim"]) or "-"
        control = f"{statistics.mean(c['control']):.0f}" if c["control"] else "-"
        misses = str(c["misses"]) if c["control"] else "-"
        background = f"{statistics.mean(c['background']):.0f}" if c["background"] else "-"
        print(f"| {key[0]} | {key[1]} | {key[2]} | {statistics.median(it):.0f} [{min(it):.0f}, {max(it):.0f}] "
              f"| {statistics.mean(c['bubble']) * 1000:.0f} | {statistics.mean(c['exposed']) * 1000:.0f} "
              f"| {background} | {misses} | {control} | {sims} |")
    print(f"\n(bottleneck {rate} Mbit/s into each stage; {len(cells)} cells)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
