#!/usr/bin/python3
"""Fidelity suite: runs every case in safs-sim and in ns-3 and compares them.

Each case (validation/cases/*.toml) is one network and one set of flows,
described once with safs-sim's scenario keys plus a [fidelity] table. From it
this runner writes the safs-sim scenario (every matched key explicit) and the
case file of the ns-3 program (validation/ns3), runs both, and prints one row
per case and metric: ns-3, safs-sim, difference, tolerance, pass/fail.

Exit status: 0 every row passes, 1 a tolerance breaks, 2 bad usage or a
broken case, 77 ns-3 is not installed (nothing was compared). With --check,
a row outside tolerance breaks nothing when validation/known-differences.toml
lists it with its reason: exit 1 only for a row outside tolerance that the
list does not name (what CI runs).
Standard library only (Python 3.11: tomllib).
"""

import argparse
import csv
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SKIP_STATUS = 77  # the automake/ctest convention for "skipped"

# The network and transport keys both sides are built from, with the value a
# case gets when it does not set one (safs-sim's defaults; written out
# explicitly so the two sides never depend on two sets of defaults).
MATCHED_KEYS = {
    "topology": {"kind": "star", "hosts": 2, "hosts_per_leaf": 1, "leaves": 2, "spines": 1,
                 "link_gbps": 100.0, "fabric_link_gbps": None, "link_delay_us": 1.0},
    "network": {"mtu_bytes": 4096, "header_bytes": 78, "port_buffer_bytes": 1000000,
                "ecn_threshold_bytes": 100000},
    "transport": {"initial_cwnd_packets": 10, "rto_min_us": 1000.0, "dupack_threshold": 3,
                  "shift_g": 4, "initial_alpha": 1.0, "sack": True},
}

# Phases: a case with `phases = N` in [fidelity] runs N times on each side,
# run k (1..N) starting its flow i k * i * phase_step_ns late, and each side's
# metrics are the means over the N runs. Under heavy loss a drop-tail queue
# decides by a packet's arrival slot which flow loses (the phase effect,
# Floyd and Jacobson, Internetworking: Research and Experience 3(3), 1992), so
# one run's metrics swing by tens of percent with a shift of nanoseconds, on
# either side; their means are what two simulators can agree on. 10 ns is far
# below one packet's serialisation at 400 Gbit/s (83 ns for 4174 bytes).
DEFAULT_PHASE_STEP_NS = 10.0

# The topology keys each kind takes (safs-sim rejects the others).
TOPOLOGY_KEYS = {"star": {"kind", "hosts", "link_gbps", "link_delay_us"},
                 "leaf_spine": {"kind", "hosts_per_leaf", "leaves", "spines", "link_gbps",
                                "fabric_link_gbps", "link_delay_us"}}

# The tolerances: relative for FCTs, marks, queue and drops; the
# order of magnitude for timeouts.
TOLERANCES = {"last_fct_us": 0.01, "median_fct_us": 0.03, "first_fct_us": 0.05,
              "ecn_marks": 0.10, "mean_queue_bytes": 0.10, "queue_drops": 0.15,
              "timeouts": None}
HANDFUL_TIMEOUTS = 5  # ns-3 counts above this must be matched by a non-zero count


KNOWN_DIFFERENCES = os.path.join(HERE, "known-differences.toml")


class CaseError(Exception):
    pass


def load_known_differences(path):
    """{(case, metric): reason} from the list of rows known to differ."""
    with open(path, "rb") as f:
        try:
            entries = tomllib.load(f).get("difference", [])
        except tomllib.TOMLDecodeError as e:
            raise CaseError(f"{path}: {e}") from e
    known = {}
    for i, entry in enumerate(entries):
        missing = [k for k in ("case", "metric", "departs", "reason") if not entry.get(k)]
        if missing:
            raise CaseError(f"{path}: difference #{i + 1}: needs {', '.join(missing)}")
        if entry["metric"] not in TOLERANCES:
            raise CaseError(f"{path}: difference #{i + 1}: metric {entry['metric']!r} is not one "
                            f"of {', '.join(TOLERANCES)}")
        if entry["departs"] not in ("ns-3", "safs-sim", "both", "unattributed"):
            raise CaseError(f"{path}: difference #{i + 1}: departs must be ns-3, safs-sim, "
                            "both or unattributed (which side departs from Linux)")
        known[(entry["case"], entry["metric"])] = entry["reason"]
    return known


def load_case(path):
    with open(path, "rb") as f:
        try:
            case = tomllib.load(f)
        except tomllib.TOMLDecodeError as e:
            raise CaseError(f"{path}: {e}") from e
    fidelity = case.pop("fidelity", None)
    if fidelity is None or "queue_port" not in fidelity:
        raise CaseError(f"{path}: needs a [fidelity] table with queue_port")
    transport = case.get("transport", {})
    name = transport.get("name")
    if name not in ("dctcp", "reno"):
        raise CaseError(f"{path}: transport.name must be dctcp or reno")
    flows = list(case.get("flows", []))
    incast = fidelity.get("incast")
    if incast is not None:
        for i in range(incast["senders"]):
            flows.append({"src": incast.get("first_sender", 1) + i, "dst": incast.get("receiver", 0),
                          "size_bytes": incast["size_bytes"],
                          "start_us": incast.get("start_us", 0.0) + i * incast.get("stagger_us", 0.0)})
    if not flows:
        raise CaseError(f"{path}: no flows ([[flows]] or [fidelity.incast])")
    phases = fidelity.get("phases", 1)
    if not isinstance(phases, int) or isinstance(phases, bool) or not 1 <= phases <= 64:
        raise CaseError(f"{path}: fidelity.phases: expected an integer from 1 to 64")
    case["flows"] = flows
    return os.path.splitext(os.path.basename(path))[0], case, fidelity


def matched(case, section, key):
    if section == "transport":
        value = case.get("transport", {}).get(case["transport"]["name"], {}).get(key)
    else:
        value = case.get(section, {}).get(key)
    if value is None:
        value = MATCHED_KEYS[section][key]
    if section == "topology" and key == "fabric_link_gbps" and value is None:
        value = matched(case, "topology", "link_gbps")
    return value


def phase_flows(case, fidelity, phase):
    """The case's flows in run `phase` (0 for a case without phases)."""
    step_us = fidelity.get("phase_step_ns", DEFAULT_PHASE_STEP_NS) / 1000 * phase
    return [dict(f, start_us=float(f.get("start_us", 0)) + i * step_us)
            for i, f in enumerate(case["flows"])]


def toml_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    return f'"{value}"' if isinstance(value, str) else f"{value}"


def write_scenario(case, fidelity, flows, path):
    """The safs-sim scenario: every matched key explicit."""
    name = case["transport"]["name"]
    lines = ["# Generated by validation/fidelity.py from the case description.",
             "[simulation]", f"stop_ms = {fidelity.get('stop_ms', 100.0)}", "", "[topology]"]
    for key in MATCHED_KEYS["topology"]:
        if key not in TOPOLOGY_KEYS[matched(case, "topology", "kind")]:
            continue
        lines.append(f"{key} = {toml_value(matched(case, 'topology', key))}")
    lines += ["", "[network]"]
    lines += [f"{key} = {toml_value(matched(case, 'network', key))}" for key in MATCHED_KEYS["network"]]
    lines += ["", "[transport]", f'name = "{name}"', "", f"[transport.{name}]"]
    for key in MATCHED_KEYS["transport"]:
        if name == "reno" and key in ("shift_g", "initial_alpha"):
            continue
        lines.append(f"{key} = {toml_value(matched(case, 'transport', key))}")
    for flow in flows:
        lines += ["", "[[flows]]", f"src = {flow['src']}", f"dst = {flow['dst']}",
                  f"size_bytes = {flow['size_bytes']}", f"start_us = {float(flow.get('start_us', 0))}"]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def ns3_value(value):
    return int(value) if isinstance(value, bool) else value


def write_ns3_case(case, fidelity, flows, path, extra):
    lines = ["# Generated by validation/fidelity.py from the case description.",
             f"topology {matched(case, 'topology', 'kind')}"]
    for key in MATCHED_KEYS["topology"]:
        if key != "kind":
            lines.append(f"{key} {matched(case, 'topology', key)}")
    lines += [f"{key} {matched(case, 'network', key)}" for key in MATCHED_KEYS["network"]]
    lines.append(f"transport {case['transport']['name']}")
    lines += [f"{key} {ns3_value(matched(case, 'transport', key))}"
              for key in MATCHED_KEYS["transport"]]
    lines += [f"queue_port {fidelity['queue_port']}", f"stop_ms {fidelity.get('stop_ms', 100.0)}"]
    lines += [f"{key} {value}" for key, value in extra]
    lines += [f"flow {f['src']} {f['dst']} {f['size_bytes']} {float(f.get('start_us', 0))}"
              for f in flows]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def queue_port_gbps(case, port):
    """The link rate behind a port: host links end at a host, the rest are fabric."""
    to_host = re.search(r"->host\d+$", port) or port.startswith("host")
    return matched(case, "topology", "link_gbps" if to_host else "fabric_link_gbps")


def fct_metrics(flows):
    """flows: list of (start_s, finish_s or None). FCTs in microseconds."""
    if any(finish is None for _, finish in flows):
        return None
    fcts = [(finish - start) * 1e6 for start, finish in flows]
    return {"first_fct_us": min(fcts), "median_fct_us": statistics.median(fcts),
            "last_fct_us": max(fcts)}


def window_of(flows):
    return min(s for s, _ in flows), max(f for _, f in flows)


def run_safs(safs_sim, scenario, out_dir, case, fidelity, overrides):
    wire = matched(case, "network", "mtu_bytes") + matched(case, "network", "header_bytes")
    packet_us = wire * 8 / (queue_port_gbps(case, fidelity["queue_port"]) * 1e3)
    sample_us = packet_us / 32  # sampling error about 0.1% (0.5% at a period of packet_us / 8)
    cmd = [safs_sim, "run", scenario, "--out", out_dir, "--quiet", "--force",
           "--queue-sample-us", f"{sample_us:.6f}"]
    name = case["transport"]["name"]
    for key, value in overrides:
        cmd += ["--set", f"transport.{name}.{key}={value}"]
    subprocess.run(cmd, check=True)
    with open(os.path.join(out_dir, "summary.json")) as f:
        summary = json.load(f)
    with open(os.path.join(out_dir, "flows.csv")) as f:
        flows = [(float(r["start_s"]), float(r["finish_s"]) if r["finish_s"] else None)
                 for r in csv.DictReader(f)]
    metrics = fct_metrics(flows) or {}
    metrics["ecn_marks"] = summary["network"]["ecn_marks"]
    metrics["queue_drops"] = summary["network"]["queue_drops"]
    metrics["timeouts"] = summary["transport_stats"]["timeouts"]
    if metrics.get("last_fct_us") is not None:
        start, end = window_of(flows)
        metrics["mean_queue_bytes"] = sampled_mean(os.path.join(out_dir, "queues.csv"),
                                                   fidelity["queue_port"], start, end)
    return metrics


def sampled_mean(path, port, start_s, end_s):
    """Time-average of a port's sampled depth over [start_s, end_s]; each
    sample holds until the next change (queues.csv writes changes only)."""
    changes = [(0.0, 0.0)]
    with open(path) as f:
        for row in csv.DictReader(f):
            if row["port"] == port:
                changes.append((float(row["time_s"]), float(row["queue_bytes"])))
    changes.append((math.inf, 0.0))
    total = 0.0
    for (t0, depth), (t1, _) in zip(changes, changes[1:]):
        lo, hi = max(t0, start_s), min(t1, end_s)
        if hi > lo:
            total += depth * (hi - lo)
    return total / (end_s - start_s) if end_s > start_s else 0.0


def run_ns3(binary, case_file, trace=None):
    cmd = [binary, case_file] + ([trace] if trace else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    metrics, flows = {}, []
    for line in out.splitlines():
        parts = line.split()
        if parts[0] == "flow":
            finish = float(parts[3])
            flows.append((float(parts[2]), finish if finish >= 0 else None))
        else:
            metrics[parts[0]] = float(parts[1])
    metrics.update(fct_metrics(flows) or {})
    return metrics


def compare(metric, reference, value, mtu_wire_bytes):
    """(difference text, tolerance text, passed)."""
    if reference is None or value is None:
        return "n/a", "", False
    if metric == "timeouts":
        if reference == 0:
            return f"{value - reference:+.0f}", "0 if ns-3 0", value == 0
        if reference > HANDFUL_TIMEOUTS:
            ok = value > 0 and reference / 10 <= value <= reference * 10
            return f"{value - reference:+.0f}", "same order", ok
        return f"{value - reference:+.0f}", "<= 10x", value <= reference * 10
    tolerance = TOLERANCES[metric]
    if metric == "mean_queue_bytes":
        # A floor of a tenth of a packet keeps an empty queue comparable.
        slack = max(tolerance * reference, 0.1 * mtu_wire_bytes)
        diff = value - reference
        return (f"{100 * diff / reference:+.1f}%" if reference else f"{diff:+.0f} B",
                f"{100 * tolerance:.0f}%", abs(diff) <= slack)
    if reference == 0:
        return f"{value:+.0f}", "0 if ns-3 0", value == 0
    diff = (value - reference) / reference
    return f"{100 * diff:+.1f}%", f"{100 * tolerance:.0f}%", abs(diff) <= tolerance


def mean_metrics(runs):
    """Each metric's mean over the runs of a case (None if a run lacks it)."""
    keys = set().union(*runs)
    return {k: (statistics.mean(r[k] for r in runs)
                if all(r.get(k) is not None for r in runs) else None) for k in keys}


def relative_spread(values):
    """The sample standard deviation over the mean, as text; empty for one run."""
    if len(values) < 2 or any(v is None for v in values):
        return ""
    mean = statistics.mean(values)
    return f"{100 * statistics.stdev(values) / mean:.0f}%" if mean else "0%"


def fmt(metric, value):
    if value is None:
        return "incomplete"
    return f"{value:.2f}" if metric.endswith("_us") else f"{value:.0f}"


def build_ns3(build_dir):
    subprocess.run(["cmake", "-S", HERE, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", build_dir, "-j", str(os.cpu_count() or 1)],
                   check=True, stdout=subprocess.DEVNULL)
    return os.path.join(build_dir, "safs-fidelity-ns3")


def ns3_available():
    return (shutil.which("pkg-config") is not None and
            subprocess.run(["pkg-config", "--exists", "ns3-internet", "ns3-point-to-point",
                            "ns3-traffic-control", "ns3-applications"]).returncode == 0)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--safs-sim", default=os.path.join(ROOT, "build", "bin", "safs-sim"),
                   help="safs-sim binary (default: build/bin/safs-sim)")
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build", "validation-ns3"),
                   help="build directory of the ns-3 side (default: build/validation-ns3)")
    p.add_argument("--out", default=os.path.join(ROOT, "out", "validation"),
                   help="where each case's inputs and outputs go (default: out/validation)")
    p.add_argument("--cases", default="", help="only cases whose name matches this regex")
    p.add_argument("--quick", action="store_true", help="only the cases marked quick = true")
    p.add_argument("--markdown", action="store_true", help="print the table as markdown")
    p.add_argument("--check", action="store_true",
                   help="CI mode: fail only on a row outside tolerance that "
                        "validation/known-differences.toml does not list")
    p.add_argument("--cwnd-trace", action="store_true",
                   help="also write ns-3's cwnd of each case's first flow (ns3-cwnd.txt)")
    p.add_argument("--ns3-set", action="append", default=[], metavar="KEY=VALUE",
                   help="diagnosis: a setting of the ns-3 side only (recovery=classic: the window "
                        "cut at once instead of PRR; dctcp_floor=0: stock ns-3 DCTCP without "
                        "Linux's two-segment floor; sack=0: NewReno without SACK; both sides run "
                        "SACK by default, as Linux, and --safs-set sack=false turns safs-sim's "
                        "off)")
    p.add_argument("--safs-set", action="append", default=[], metavar="KEY=VALUE",
                   help="diagnosis: a [transport.NAME] knob of the safs-sim side only (prr=false, "
                        "impatient_rto=false, loss_state=false, sack=false: see "
                        "docs/validation.md)")
    args = p.parse_args()
    for option in ("ns3_set", "safs_set"):
        items = [tuple(item.split("=", 1)) for item in getattr(args, option)]
        if any(len(item) != 2 for item in items):
            p.error(f"--{option.replace('_', '-')}: expected KEY=VALUE")
        setattr(args, option, items)
    try:
        args.case_filter = re.compile(args.cases)
    except re.error as e:
        p.error(f"--cases: {e}")
    return args


def print_table(rows, markdown):
    header = ["case", "metric", "ns-3", "safs-sim", "difference", "tolerance", "result",
              "ns-3 spread"]
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "|".join("---" for _ in header) + "|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
        return
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    for row in [header] + rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip())


def main():
    args = parse_args()
    case_dir = os.path.join(HERE, "cases")
    cases = []
    try:
        for file in sorted(os.listdir(case_dir)):
            if file.endswith(".toml"):
                name, case, fidelity = load_case(os.path.join(case_dir, file))
                if args.case_filter.search(name) and (not args.quick or fidelity.get("quick")):
                    cases.append((name, case, fidelity))
    except (CaseError, KeyError) as e:
        print(f"fidelity: {e}", file=sys.stderr)
        return 2
    if not cases:
        print("fidelity: no case matches", file=sys.stderr)
        return 2
    try:
        known = load_known_differences(KNOWN_DIFFERENCES) if args.check else {}
    except (CaseError, OSError) as e:
        print(f"fidelity: {e}", file=sys.stderr)
        return 2
    if args.check and (args.ns3_set or args.safs_set):
        print("fidelity: --check compares the default settings; drop --ns3-set/--safs-set",
              file=sys.stderr)
        return 2
    if not os.access(args.safs_sim, os.X_OK):
        print(f"fidelity: {args.safs_sim}: no safs-sim binary (build it first)", file=sys.stderr)
        return 2
    if not ns3_available():
        print("fidelity: SKIPPED: ns-3 (Debian's libns3-dev) is not installed; "
              "scripts/setup.sh installs it where the package exists", file=sys.stderr)
        return SKIP_STATUS
    ns3 = build_ns3(args.build_dir)

    rows, failures, unexplained, stale = [], 0, [], []
    for name, case, fidelity in cases:
        phases = fidelity.get("phases", 1)
        runs = []  # (ns-3 metrics, safs-sim metrics) per phase
        for phase in range(1, phases + 1) if phases > 1 else [0]:
            out = os.path.join(args.out, name, f"phase-{phase}") if phases > 1 else \
                os.path.join(args.out, name)
            os.makedirs(out, exist_ok=True)
            flows = phase_flows(case, fidelity, phase)
            scenario = os.path.join(out, "scenario.toml")
            ns3_case = os.path.join(out, "ns3-case.txt")
            write_scenario(case, fidelity, flows, scenario)
            write_ns3_case(case, fidelity, flows, ns3_case, args.ns3_set)
            trace = os.path.join(out, "ns3-cwnd.txt") if args.cwnd_trace and phase <= 1 else None
            runs.append((run_ns3(ns3, ns3_case, trace),
                         run_safs(args.safs_sim, scenario, os.path.join(out, "safs-sim"), case,
                                  fidelity, args.safs_set)))
        reference = mean_metrics([r for r, _ in runs])
        ours = mean_metrics([o for _, o in runs])
        wire = matched(case, "network", "mtu_bytes") + matched(case, "network", "header_bytes")
        metrics = [m for m in TOLERANCES if m != "ecn_marks" or case["transport"]["name"] == "dctcp"]
        for metric in metrics:
            ref, val = reference.get(metric), ours.get(metric)
            diff, tol, ok = compare(metric, ref, val, wire)
            listed = (name, metric) in known
            result = "pass" if ok else ("known" if listed else "FAIL")
            failures += not ok
            if not ok and not listed:
                unexplained.append((name, metric))
            if ok and listed:
                stale.append((name, metric))
            spread = relative_spread([r.get(metric) for r, _ in runs])
            rows.append([name, metric, fmt(metric, ref), fmt(metric, val), diff, tol, result,
                         spread])
    print_table(rows, args.markdown)
    print(f"\n{len(rows) - failures} of {len(rows)} rows pass ({len(cases)} cases)")
    if not args.check:
        return 1 if failures else 0
    for name, metric in stale:
        print(f"note: {name} {metric} is within tolerance now; remove it from "
              "validation/known-differences.toml")
    for name, metric in unexplained:
        print(f"FAIL: {name} {metric} is outside tolerance and not in "
              "validation/known-differences.toml")
    print(f"check: outside tolerance, {failures - len(unexplained)} rows listed as known "
          f"differences, {len(unexplained)} not listed")
    return 1 if unexplained else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except subprocess.CalledProcessError as e:
        print(f"fidelity: {' '.join(e.cmd)} failed (exit {e.returncode})"
              + (f":\n{e.stderr}" if e.stderr else ""), file=sys.stderr)
        sys.exit(2)
