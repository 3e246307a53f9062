"""The table of docs/real-pipeline.md from a run.sh output directory.

    python3 report.py OUT_DIR RATE_MBIT

Per cell (schedule, communication, competitor): the iteration time (median
over every measured iteration of every run, and the range), the bubble and
the exposed communication per stage (means), SAFS's deadline misses and
control bytes per iteration, how long a tensor the receiver waited for
took from isend to received (median; waits of at least 1 ms), the
background's rate into a stage (SAFS: what the stage's endpoint took while
measuring; gloo: what the sink got over the cell), and the sim-to-real check: safs-sim's
prediction for each run's last iteration against its measurement. Then,
with several runs, the bubble of each run (run.sh runs them in rounds, so
the n-th values of a row were measured one after another), and for SAFS
what its granted sends delivered against their grants per 20 ms window
(docs/runtime.md, "Contention fallback"), for sends announced ahead
(safs-ahead) how many started under their planned grant, and where the
bubble goes (waiting for tensors, for the stage's own sends to complete,
at the closing barrier, the rest) beside the ops' wall time and the CPU
time of the stage's main thread and of its other (the transport's)
threads, and for SAFS the calls from Python into the endpoint's thread,
its sends reported at risk, and each send judged: late for its consumer
or not, reported at risk or not.
"""

import glob
import json
import os
import statistics
import sys
from collections import defaultdict


def runs(out):
    """Each run in a run.sh output directory, by cell and then run number
    (run 10 after run 9): ((schedule, communication, competitor), run
    number, file name stem, every rank's JSON in rank order)."""
    # The directory's name is not a pattern: escape it (run.sh takes any).
    here = glob.escape(out)
    found = []
    for path in glob.glob(os.path.join(here, "*.rank0.json")):
        name = os.path.basename(path)[: -len(".rank0.json")]
        schedule, comm, competition, run = name.split(".")
        found.append(((schedule, comm, competition), int(run), name))
    for key, run, name in sorted(found):
        paths = glob.glob(os.path.join(here, glob.escape(name) + ".rank*.json"))
        paths.sort(key=lambda p: int(p[: -len(".json")].rsplit(".rank", 1)[1]))
        yield key, run, name, [read_json(p) for p in paths]


def read_json(path):
    with open(path) as f:
        return json.load(f)


def run_bubble_s(ranks):
    """A run's bubble per stage: the mean over its measured iterations of
    the mean over stages."""
    return statistics.mean(statistics.mean(r["iterations"][i]["bubble_s"] for r in ranks)
                           for i in range(len(ranks[0]["iterations"])))


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    out, rate = argv
    if not any(runs(out)):
        print(f"report.py: {out}: no run's *.rank0.json here (a run.sh output directory?)",
              file=sys.stderr)
        return 2
    cells = defaultdict(lambda: {"iters": [], "bubble": [], "exposed": [], "misses": 0,
                                 "control": [], "sim": [], "waited_transfer": [], "background": [],
                                 "run_bubble": {}, "delivery": None, "plans": [0, 0, 0, 0, 0, 0], "calls": [],
                                 "risks": None, "verdicts": None,
                                 "parts": defaultdict(list)})
    order = []
    congestion_controls, idle_restarts, queues = set(), set(), set()
    for key, run, name, ranks in runs(out):
        congestion_controls.update(r.get("tcp_congestion_control", "not recorded") for r in ranks)
        idle_restarts.update(r.get("tcp_slow_start_after_idle", "not recorded") for r in ranks)
        queues.update(f"{r['queue_kb']} KB" if r.get("queue_kb") else "1000 packets" for r in ranks)
        if key not in cells:
            order.append(key)
        add_run(cells[key], out, key, run, name, ranks)

    print("| schedule | communication | competitor | iteration (ms): median [min, max] | "
          "bubble per stage (ms) | exposed comm per stage (ms) | waited-for transfer (ms) "
          "| background into a stage (Mbit/s) | SAFS misses | control B/iteration | safs-sim prediction vs measured |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|---:|---|")
    rank = {"gpipe": 0, "1f1b": 1, "zb-h1": 2, "none": 0, "background": 1, "bulk": 2, "bulk-qos": 3,
            "safs": 0, "safs-fresh": 1, "safs-paced": 2, "safs-asap": 3, "safs-ahead": 4, "safs-edf": 5,
            "safs-parallel": 6, "safs-ownrate": 7, "gloo-preposted": 8, "gloo": 9}
    for key in sorted(order, key=lambda k: (rank.get(k[2], 9), rank.get(k[0], 9), rank.get(k[1], 9))):
        c = cells[key]
        it = [x * 1000 for x in c["iters"]]
        sims = ", ".join(f"{e:+.1%}" for e in c["sim"]) or "-"
        control = f"{statistics.mean(c['control']):.0f}" if c["control"] else "-"
        misses = str(c["misses"]) if c["control"] else "-"
        background = f"{statistics.mean(c['background']):.0f}" if c["background"] else "-"
        waited = f"{statistics.median(c['waited_transfer']) * 1000:.1f}" if c["waited_transfer"] else "-"
        print(f"| {key[0]} | {key[1]} | {key[2]} | {statistics.median(it):.0f} [{min(it):.0f}, {max(it):.0f}] "
              f"| {statistics.mean(c['bubble']) * 1000:.0f} | {statistics.mean(c['exposed']) * 1000:.0f} "
              f"| {waited} | {background} | {misses} | {control} | {sims} |")
    print(f"\n(bottleneck {rate} Mbit/s into each stage; {len(cells)} cells; TCP congestion "
          f"control {', '.join(sorted(congestion_controls))}; restart after idle "
          f"(net.ipv4.tcp_slow_start_after_idle) {', '.join(sorted(idle_restarts))}; bottleneck "
          f"FIFO {', '.join(sorted(queues))})")
    ordered = sorted(order, key=lambda k: (rank.get(k[2], 9), rank.get(k[0], 9), rank.get(k[1], 9)))
    print_runs(cells, ordered, rank)
    print_delivery(cells, ordered)
    print_plans(cells, ordered)
    print_risks(cells, ordered)
    print_verdicts(cells, ordered)
    print_parts(cells, ordered)
    return 0


def add_run(cell, out, key, run, name, ranks):
    """Adds one run (its file stem `name`, every rank's JSON) to its cell."""
    cell["run_bubble"][run] = run_bubble_s(ranks)
    if "grant_delivery_windows" in ranks[0]:
        d = cell["delivery"] or {"windows": [0] * 11, "lossy": 0, "queued": 0, "max_queue_ns": 0,
                                 "contended": 0, "episodes": 0}
        for r in ranks:
            d["windows"] = [a + b for a, b in zip(d["windows"], r["grant_delivery_windows"])]
            d["lossy"] += r["lossy_windows"]
            d["queued"] += r["queued_windows"]
            d["max_queue_ns"] = max(d["max_queue_ns"], r["max_queue_delay_ns"])
            d["contended"] += r["contended_paths"]
            # None once a run without the count (an older output) is in the cell.
            if d["episodes"] is not None and "shortfall_episodes" in r:
                d["episodes"] += r["shortfall_episodes"]
            else:
                d["episodes"] = None
        cell["delivery"] = d
    for r in ranks:
        for it in r["iterations"]:
            if "send_drain_s" in it:
                for part in ("bubble_s", "exposed_comm_s", "send_drain_s", "barrier_s", "busy_s"):
                    cell["parts"][part].append(it[part])
                if "main_cpu_s" in it:
                    cell["parts"]["main_cpu_s"].append(it["main_cpu_s"])
                    cell["parts"]["other_cpu_s"].append(it["cpu_s"] - it["main_cpu_s"])
        if "loop_calls" in r:
            cell["calls"].append(r["loop_calls"] / len(r["iterations"]))
        if "risk_reports" in r:  # sends, reported at risk (older outputs: none)
            sends = sum(len(it.get("sends", [])) for it in r["iterations"])
            cell["risks"] = [a + b for a, b in zip(cell["risks"] or [0, 0],
                                                   [sends, r["risk_reports"]])]
        cell["plans"][0] += r.get("plans_sent", 0)
        cell["plans"][1] += r.get("flows_on_plans", 0)
        for i, field in enumerate(("plans_warned_late", "plans_warned_on_time",
                                   "plans_unwarned_late", "plans_unwarned_on_time")):
            cell["plans"][2 + i] += r.get(field, 0)  # older outputs: none
    cell["waited_transfer"] += waited_transfers(ranks)
    verdicts = risk_verdicts(ranks)
    if verdicts is not None:
        cell["verdicts"] = cell["verdicts"] or {verdict: type(value)() for verdict, value in
                                                verdicts.items()}
        for verdict, value in verdicts.items():
            cell["verdicts"][verdict] += value
    for i in range(len(ranks[0]["iterations"])):
        cell["iters"].append(max(r["iterations"][i]["iteration_s"] for r in ranks))
        cell["bubble"].append(statistics.mean(r["iterations"][i]["bubble_s"] for r in ranks))
        cell["exposed"].append(statistics.mean(r["iterations"][i]["exposed_comm_s"] for r in ranks))
    if "deadline_misses" in ranks[0]:
        cell["misses"] += sum(r["deadline_misses"] for r in ranks)
        cell["control"].append(sum(r["control_bytes"] for r in ranks) / len(ranks[0]["iterations"]))
    if "background_bytes" in ranks[0] and key[2] == "background":
        cell["background"].append(statistics.mean(
            r["background_bytes"] * 8 / r["measured_s"] / 1e6 for r in ranks))
    sinks = sorted(glob.glob(os.path.join(glob.escape(out), glob.escape(name) + ".sink*")))
    if sinks:
        rates = []
        for sink in sinks:
            with open(sink) as f:
                got, seconds = f.read().split()
            rates.append(int(got) * 8 / float(seconds) / 1e6)
        cell["background"].append(statistics.mean(rates))
    sim_path = os.path.join(out, name + ".sim.json")
    if os.path.exists(sim_path):
        sim = read_json(sim_path)
        cell["sim"].append(sim["predicted_iteration_s"] / sim["measured_iteration_s"] - 1)


def waited_transfers(ranks):
    """Seconds from the sender's isend to the end of the receiver's wait, for
    each tensor a rank waited at least 1 ms for. An activation (F) comes from
    the rank before; a gradient (waited for by B or BW) from the rank after,
    sent after its B or BW. Older outputs without the records give none."""
    # (sending rank, iteration, forward?, micro-batch) -> when isend was called
    sent = {}
    for r in ranks:
        for i, iteration in enumerate(r["iterations"]):
            for kind, mb, t in iteration.get("sends", []):
                sent.setdefault((r["rank"], i, kind == "F", mb), t)
    seconds = []
    for r in ranks:
        for i, iteration in enumerate(r["iterations"]):
            for kind, mb, began, ended in iteration.get("waits", []):
                sender = r["rank"] - 1 if kind == "F" else r["rank"] + 1
                t = sent.get((sender, i, kind == "F", mb))
                if ended - began >= 1_000_000 and t is not None:
                    seconds.append((ended - t) / 1e9)
    return seconds


def risk_verdicts(ranks):
    """Each SAFS send judged against what its consumer saw: late if the
    receiving rank waited at least 1 ms for it; warned if it was reported
    at risk (its first report, of its flow or of its plan) before the
    consumer had it, early if that came before the consumer began to wait,
    with the lead in seconds, and by its plan if its receiver warned of its
    plan before the consumer had it. None for runs that did not record
    reports per send (gloo, older outputs)."""
    if not all("risks" in it for r in ranks for it in r["iterations"]):
        return None
    # (receiving rank, iteration, forward?, micro-batch) -> (wait began, ended)
    waited = {}
    for r in ranks:
        for i, iteration in enumerate(r["iterations"]):
            for kind, mb, began, ended in iteration.get("waits", []):
                waited[(r["rank"], i, kind == "F", mb)] = (began, ended)
    counts = {"sends": 0, "late": 0, "warned": 0, "by_plan": 0, "early": 0, "false": 0,
              "unwarned": 0, "leads": []}
    for r in ranks:
        for i, iteration in enumerate(r["iterations"]):
            reported, planned = {}, {}
            for kind, mb, at, _, *was_planned in iteration["risks"]:  # older: 4 fields
                reported[(kind, mb)] = min(at, reported.get((kind, mb), at))
                if was_planned and was_planned[0]:
                    planned[(kind, mb)] = at
            for kind, mb, _ in iteration.get("sends", []):
                receiver = r["rank"] + 1 if kind == "F" else r["rank"] - 1
                wait = waited.get((receiver, i, kind == "F", mb))
                if wait is None:
                    continue
                late = wait[1] - wait[0] >= 1_000_000
                at = reported.get((kind, mb))
                if at is not None and at >= wait[1]:
                    # Reported once the consumer had it (past its deadline,
                    # awaiting the receiver's Done): no warning to anyone.
                    at = None
                counts["sends"] += 1
                counts["late"] += late
                if at is not None and late:
                    counts["warned"] += 1
                    counts["by_plan"] += planned.get((kind, mb), wait[1]) < wait[1]
                    counts["early"] += at < wait[0]
                    counts["leads"].append((wait[0] - at) / 1e9)
                elif at is not None:
                    counts["false"] += 1
                elif late:
                    counts["unwarned"] += 1
    return counts


def print_runs(cells, ordered, rank):
    """Bubble per stage of each run, a row per competitor and schedule."""
    if max(len(cells[k]["run_bubble"]) for k in ordered) < 2:
        return
    comms = sorted({k[1] for k in ordered}, key=lambda c: rank.get(c, 9))
    print("\nBubble per stage of each run (ms), in run order:\n")
    print("| competitor | schedule | " + " | ".join(f"`{c}`" for c in comms) + " |")
    print("|---|---|" + "---|" * len(comms))
    rows = []
    for k in ordered:
        if (k[2], k[0]) not in rows:
            rows.append((k[2], k[0]))
    for competition, schedule in rows:
        values = []
        for comm in comms:
            runs = cells.get((schedule, comm, competition), {}).get("run_bubble", {})
            values.append(" / ".join(f"{runs[r] * 1000:.0f}" for r in sorted(runs)) or "-")
        print(f"| {competition} | {schedule} | " + " | ".join(values) + " |")


def print_delivery(cells, ordered):
    """SAFS's windows: delivered over what the grants allowed."""
    rows = [k for k in ordered if cells[k]["delivery"] and sum(cells[k]["delivery"]["windows"])]
    if not rows:
        return
    print("\nWhat SAFS's granted sends delivered against their grants, per 20 ms window "
          "(every rank and run; windows by share of the grant):\n")
    print("| schedule | communication | competitor | windows | at most 0.5 | 0.5-0.9 | 0.9-1.0 "
          "| above 1.0 | with a retransmission | with a queue (5 ms) | largest queue (ms) "
          "| paths found contended | EDF-when-short episodes |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for k in rows:
        d = cells[k]["delivery"]
        w = d["windows"]
        n = sum(w)
        share = lambda part: f"{part / n:.0%}"
        print(f"| {k[0]} | {k[1]} | {k[2]} | {n} | {share(sum(w[:5]))} | {share(sum(w[5:9]))} "
              f"| {share(w[9])} | {share(w[10])} | {share(d['lossy'])} | {share(d['queued'])} "
              f"| {d['max_queue_ns'] / 1e6:.1f} | {d['contended']} "
              f"| {'-' if d['episodes'] is None else d['episodes']} |")


def calls(per_iteration):
    """Calls into the endpoint per stage and iteration ('-': not recorded)."""
    return f"{statistics.mean(per_iteration):.0f}" if per_iteration else "-"


def cpu(parts, name):
    return f"{parts[name]:.0f}" if name in parts else "-"


def print_parts(cells, ordered):
    """Where the bubble goes, per stage and iteration (means), for runs that
    record it."""
    rows = [k for k in ordered if cells[k]["parts"]]
    if not rows:
        return
    print("\nWhere the bubble goes (ms per stage and iteration, means over stages, iterations "
          "and runs):\n")
    print("| schedule | communication | competitor | bubble | waiting for tensors "
          "| own sends completing | closing barrier | the rest | ops (wall) | main thread's CPU "
          "| other threads' CPU | calls into the endpoint |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for k in rows:
        p = {name: statistics.mean(v) * 1000 for name, v in cells[k]["parts"].items()}
        rest = p["bubble_s"] - p["exposed_comm_s"] - p["send_drain_s"] - p["barrier_s"]
        print(f"| {k[0]} | {k[1]} | {k[2]} | {p['bubble_s']:.0f} | {p['exposed_comm_s']:.0f} "
              f"| {p['send_drain_s']:.0f} | {p['barrier_s']:.0f} | {rest:.0f} | {p['busy_s']:.0f} "
              f"| {cpu(p, 'main_cpu_s')} | {cpu(p, 'other_cpu_s')} "
              f"| {calls(cells[k]['calls'])} |")


def print_counts(title, columns, rows):
    """A small table after the main one: the cell's three keys, then `columns`
    (numbers), one row per (key, values)."""
    if not rows:
        return
    print(f"\n{title}:\n")
    print("| schedule | communication | competitor | " + " | ".join(columns) + " |")
    print("|---|---|---|" + "---:|" * len(columns))
    for k, values in rows:
        print(f"| {k[0]} | {k[1]} | {k[2]} | " + " | ".join(str(v) for v in values) + " |")


def print_plans(cells, ordered):
    """Sends announced ahead, those that started under their planned grant,
    and the receivers' warning judged at each planned flow's last byte."""
    rows = []
    for k in ordered:
        sent, on_plan, warned_late, warned_on_time, unwarned_late, _ = cells[k]["plans"]
        if sent:
            late = warned_late + unwarned_late
            rows.append((k, [sent, f"{on_plan} ({on_plan / sent:.0%})", late,
                             warned_late + warned_on_time, warned_late]))
    print_counts("Sends announced ahead (every rank and run), those that started under "
                 "their planned grant, and the planned flows that ended after the deadline "
                 "they were planned with, were warned of (their plan, or the urgent set it "
                 "joined, could not be on time), or both (0 for runs recorded before these "
                 "counts)", ["announced", "on their plan", "ended late", "warned of",
                             "warned of and late"], rows)


def print_risks(cells, ordered):
    """SAFS's sends reported at risk (Endpoint.risks(): projected to miss
    their deadlines) beside the deadlines its receivers saw missed."""
    rows = [(k, [*cells[k]["risks"], cells[k]["misses"]]) for k in ordered if cells[k]["risks"]]
    print_counts("Sends projected to miss their deadlines (reported at risk, once per episode) "
                 "and deadlines missed at the receivers (every rank and run)",
                 ["sends", "reported at risk", "missed"], rows)


def print_verdicts(cells, ordered):
    """Per send: was it late for its consumer, and was it reported at risk
    (with a column for warnings of plans when any cell has one)."""
    verdicts = [(k, cells[k]["verdicts"]) for k in ordered if cells[k]["verdicts"] is not None]
    with_plans = any(v["by_plan"] for _, v in verdicts)
    rows = []
    for k, v in verdicts:
        lead = f"{statistics.median(v['leads']) * 1000:.0f}" if v["leads"] else "-"
        by_plan = [v["by_plan"]] if with_plans else []
        rows.append((k, [v["sends"], v["late"], v["warned"], *by_plan, v["early"], lead,
                         v["unwarned"], v["false"]]))
    print_counts("SAFS's sends judged one by one (every rank and run): late when the consumer "
                 "waited at least 1 ms for it; warned when it was reported at risk" +
                 (" (its flow, or its plan: the receiver's warning, safs-ahead only)"
                  if with_plans else "") +
                 "; early when that came before the consumer began to wait; lead: the "
                 "consumer's wait began that long after the first report (median, ms)",
                 ["sends", "late", "late and warned",
                  *(["of those, by its plan"] if with_plans else []), "warned early",
                  "lead (ms)", "late, not warned", "warned, not late"], rows)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
