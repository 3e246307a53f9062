"""One role of scripts/netns-uplink.sh: a SAFS receiver or a SAFS sender.

  uplink_testbed.py recv --listen HOST:PORT --downlink-mbit R --messages N --bytes B [--ready FILE]
  uplink_testbed.py send --listen HOST --uplink-mbit U --flow HOST:PORT:TAG:SLACK_MS ...
  uplink_testbed.py table DIR

A receiver posts N receives of B bytes (tags 1..N in any order), creates
FILE once it listens, and prints, when all landed, its counters as one JSON
line. A sender sends every --flow
at once from one endpoint (SLACK_MS 0: background), its uplink told to the
endpoint when U > 0 (EndpointConfig::uplink; 0: unknown, the default), and
prints one JSON line per flow (tag, finish time from the sends, deadline
met) and one with its counters. The job key comes from SAFS_JOB_KEY_FILE.
`table` reads a run directory of netns-uplink.sh (ROUND.uplink-U.{s,t,r1,r2})
and prints each run and a Markdown table of medians per mode.
"""

import argparse
import glob
import json
import os
import statistics
import sys
import time

MS = 1_000_000


def host_port(text):
    host, _, port = text.rpartition(":")
    if not host or not port.isdigit() or int(port) > 65535:
        raise argparse.ArgumentTypeError(f"'{text}': expected HOST:PORT")
    return host, int(port)


def number(kind, lowest, inclusive):
    """An argparse type: a finite `kind` above (or at) `lowest`."""
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}': expected a number")
        ok = value >= lowest if inclusive else value > lowest
        if not ok or value != value or value in (float("inf"), float("-inf")):
            raise argparse.ArgumentTypeError(
                f"'{text}': expected a number {'>=' if inclusive else '>'} {lowest}")
        return value
    return parse


def flow_spec(text):
    """HOST:PORT:TAG:SLACK_MS -> ((host, port), tag, slack_ms); SLACK_MS 0: background."""
    try:
        where, tag, slack_ms = text.rsplit(":", 2)
        peer, tag, slack_ms = host_port(where), int(tag), float(slack_ms)
    except (ValueError, argparse.ArgumentTypeError):
        raise argparse.ArgumentTypeError(f"'{text}': expected HOST:PORT:TAG:SLACK_MS")
    if peer[1] == 0 or tag < 1 or not slack_ms >= 0 or slack_ms == float("inf"):
        raise argparse.ArgumentTypeError(f"'{text}': expected a port of 1-65535, a tag of 1 or "
                                         "more and a slack of 0 (background) or more ms")
    return peer, tag, slack_ms


def receive(a):
    from safs import runtime
    ep = runtime.Endpoint(a.listen, downlink_bps=a.downlink_mbit * 1e6, quiet=True)
    ep.start()
    if a.ready:
        open(a.ready, "w").close()
    buffers = [bytearray(a.bytes) for _ in range(a.messages)]
    posted = [ep.recv_into(buffers[i], tag=i + 1) for i in range(a.messages)]
    for r in posted:
        r.wait(60)
    stats = ep.stats()
    print(json.dumps({"role": "recv", "listen": "%s:%d" % a.listen,
                      "uplink_reports_received": stats["uplink_reports_received"],
                      "grants_sent": stats["grants_sent"],
                      "deadline_misses": stats["deadline_misses"]}), flush=True)
    time.sleep(0.5)  # the senders read their Dones before the connections close
    ep.close()


def send(a):
    from safs import runtime
    ep = runtime.Endpoint((a.listen, 0), quiet=True, uplink_bps=a.uplink_mbit * 1e6)
    ep.start()
    payload = (bytes(range(256)) * (a.bytes // 256 + 1))[:a.bytes]
    flows = []
    start = runtime.monotonic_ns()
    for peer, tag, slack_ms in a.flow:
        kwargs = {"slack_ns": int(slack_ms * MS)} if slack_ms > 0 else {"urgent": False}
        flows.append((ep.send(payload, peer, tag=tag, **kwargs), tag, slack_ms))
    finished = [None] * len(flows)  # ms from the sends, per flow
    while None in finished:
        time.sleep(0.0005)
        for i, (handle, _, _) in enumerate(flows):
            if finished[i] is None and handle.done():
                finished[i] = (runtime.monotonic_ns() - start) / MS
    for (handle, tag, slack_ms), fct_ms in zip(flows, finished):
        handle.wait(1)  # raises if it failed
        print(json.dumps({"role": "send", "tag": tag, "urgent": slack_ms > 0,
                          "fct_ms": round(fct_ms, 1), "deadline_ms": slack_ms,
                          "met": (fct_ms <= slack_ms) if slack_ms > 0 else None}), flush=True)
    stats = ep.stats()
    print(json.dumps({"role": "sender", "uplink_mbit": a.uplink_mbit,
                      "uplink_reports_sent": stats["uplink_reports_sent"],
                      "grants_received": stats["grants_received"]}), flush=True)
    ep.close()


def lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def table(a):
    if not os.path.isdir(a.dir):
        print(f"uplink_testbed.py table: {a.dir}: not a directory", file=sys.stderr)
        return 2
    try:
        return table_of(a)
    except (OSError, ValueError, KeyError, IndexError, StopIteration) as e:
        print(f"uplink_testbed.py table: {a.dir}: not a netns-uplink.sh run directory "
              f"({type(e).__name__}: {e})", file=sys.stderr)
        return 2


def table_of(a):
    runs = {}
    paths = sorted(glob.glob(os.path.join(a.dir, "*.s")))
    if not paths:
        raise ValueError("no ROUND.uplink-U.s files")
    for path in paths:
        base = path[:-2]
        round_, mode = os.path.basename(base).split(".", 1)
        s, t, r2 = lines(base + ".s"), lines(base + ".t"), lines(base + ".r2")
        urgent = next(x for x in s if x.get("urgent") is True)
        s_background = next(x for x in s if x.get("urgent") is False)
        sender = next(x for x in s if x["role"] == "sender")
        run = {"urgent_ms": urgent["fct_ms"], "met": urgent["met"],
               "s_background_ms": s_background["fct_ms"],
               "t_background_ms": next(x for x in t if x["role"] == "send")["fct_ms"],
               "reports": sender["uplink_reports_sent"],
               "received": r2[0]["uplink_reports_received"]}
        runs.setdefault(mode, []).append(run)
        print(f"round {round_} {mode}: " + " ".join(f"{k}={v}" for k, v in run.items()))
    print()
    print("| s's uplink | runs | urgent flow (ms, median [min, max]) | deadlines met "
          "| s's background (ms) | t's background (ms) | reports sent per run |")
    print("|---|---:|---|---:|---:|---:|---|")
    for mode in sorted(runs, key=lambda m: float(m.split("-")[1])):
        rs = runs[mode]
        told = float(mode.split("-")[1]) > 0
        urgent = [r["urgent_ms"] for r in rs]
        print(f"| {'told' if told else 'unknown (default)'} | {len(rs)} "
              f"| {statistics.median(urgent):.0f} [{min(urgent):.0f}, {max(urgent):.0f}] "
              f"| {sum(1 for r in rs if r['met'])} of {len(rs)} "
              f"| {statistics.median(r['s_background_ms'] for r in rs):.0f} "
              f"| {statistics.median(r['t_background_ms'] for r in rs):.0f} "
              f"| {', '.join(str(r['reports']) for r in rs)} |")
    return 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="role", required=True)
    r = sub.add_parser("recv")
    r.add_argument("--listen", type=host_port, required=True)
    r.add_argument("--downlink-mbit", type=number(float, 0, False), required=True)
    r.add_argument("--messages", type=number(int, 1, True), required=True)
    r.add_argument("--bytes", type=number(int, 1, True), required=True)
    r.add_argument("--ready")
    s = sub.add_parser("send")
    s.add_argument("--listen", required=True)
    s.add_argument("--uplink-mbit", type=number(float, 0, True), default=0.0)
    s.add_argument("--bytes", type=number(int, 1, True), required=True)
    s.add_argument("--flow", type=flow_spec, action="append", required=True)
    t = sub.add_parser("table")
    t.add_argument("dir")
    a = p.parse_args(argv)
    return {"recv": receive, "send": send, "table": table}[a.role](a) or 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
