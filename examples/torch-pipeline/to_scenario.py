"""Sim-to-real: the measured pipeline as a safs-sim scenario, and its
prediction against the measurement.

Reads the ranks' JSON files of one run (pipeline.py), writes the last
measured iteration as a [graph] scenario (each op with its measured
duration, in the order its stage ran it; each activation and gradient a
transfer of the message's bytes; a star at the bottleneck's rate, its
ports' buffers the bottleneck's FIFO where that was set in bytes; the
run's transport: safs for safs, dctcp for gloo, kernel TCP's nearest), runs
it, and prints one JSON line: measured and predicted iteration time and
bubble per stage.

    python3 to_scenario.py [--competitor none|background|bulk|bulk-qos] OUT.toml rank0.json ...

With a competitor, one more host sends a bulk chain into every stage: on
the job's transport for background, on Reno (kernel TCP's nearest
unmanaged transport) for bulk and bulk-qos; with bulk-qos, gloo's flows run
on dctcp-prio (the job's traffic in a strict-priority class above the
competitor, as the testbed's htb classes put it).
"""

import json
import sys

import safs


def build(reports, competitor="none"):
    stages = len(reports)
    g = safs.Graph()
    index = {}
    for r in sorted(reports, key=lambda r: r["rank"]):
        for op in r["iterations"][-1]["ops"]:
            key = (r["rank"], op["kind"], op["mb"])
            index[key] = g.op(gpu=r["rank"], duration_us=(op["end_s"] - op["start_s"]) * 1e6,
                              label=f"{op['kind']}{r['rank']} mb{op['mb']}")
    size = reports[0]["message_bytes"]
    for (s, kind, mb), op in index.items():
        if kind == "F" and s + 1 < stages:
            g.transfer(op, index[(s + 1, "F", mb)], size)
        elif kind in ("B", "BW") and s > 0:
            g.transfer(op, index[(s - 1, kind, mb)], size)
    transport = "safs" if reports[0]["comm"].startswith("safs") else "dctcp"
    if competitor == "bulk-qos" and transport == "dctcp":
        transport = "dctcp-prio"
    hosts = stages + (competitor != "none")
    scenario = {
        "topology": {"kind": "star", "hosts": hosts, "link_gbps": reports[0]["link_mbit"] / 1000,
                     "link_delay_us": 10},
        # Kernel TCP's segments of 1448 bytes (a 1500-byte MTU less IPv4 20
        # and TCP 32 with timestamps), and what htb counts per frame besides:
        # TCP 32, IPv4 20, Ethernet 14 (no FCS, preamble or gap: the qdisc
        # sees the frame as the veth carries it). A bare ACK is 66 bytes too.
        "network": {"mtu_bytes": 1448, "header_bytes": 66},
        "transport": {"name": transport, **({"background": "reno"} if competitor.startswith("bulk") else {})},
        "simulation": {"stop_ms": 600000},
        "graph": g,
    }
    if reports[0].get("queue_kb"):  # else the simulator's default buffer
        scenario["network"]["port_buffer_bytes"] = reports[0]["queue_kb"] * 1024
    if competitor != "none":
        scenario["bulk"] = [{"src": stages, "dst": s, "size_bytes": 1 << 30} for s in range(stages)]
    return scenario


def main(argv):
    competitor = "none"
    if argv[:1] == ["--competitor"]:
        competitor, argv = argv[1] if len(argv) > 1 else "", argv[2:]
    if competitor not in ("none", "background", "bulk", "bulk-qos") or len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    reports = []
    for path in argv[1:]:
        try:
            with open(path) as f:
                reports.append(json.load(f))
        except (OSError, ValueError) as e:
            print(f"to_scenario.py: {path}: {e}; expected a rank's JSON from pipeline.py",
                  file=sys.stderr)
            return 2
    scenario = safs.Scenario(build(reports, competitor))
    with open(argv[0], "w") as f:
        f.write(scenario.toml)
    run = scenario.run()
    compute = run.summary["compute"]
    last = [r["iterations"][-1] for r in sorted(reports, key=lambda r: r["rank"])]
    print(json.dumps({
        "measured_iteration_s": max(it["iteration_s"] for it in last),
        "predicted_iteration_s": compute["iteration_time_s"],
        "measured_bubble_s": [it["bubble_s"] for it in last],
        "predicted_bubble_s": [gpu["bubble_s"] for gpu in compute["gpus"]],
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
