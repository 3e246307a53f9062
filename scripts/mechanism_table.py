"""Markdown tables of the counts SAFS's own mechanisms write into each
run's summary.json (transport_stats), per cell of a run of the evaluation
matrix (tools/evaluate's --out directory), as means per run over the
cell's seeds:

  mechanism_table.py announcements RUNS   (transport.safs.announce_ahead)
  mechanism_table.py grants RUNS          (transport.safs.report_grant_reasons)

announcements: what the receivers made of the transfers announced ahead
(scripts/announce-warnings.sh), and how good the warning was: of the
announced transfers whose flow came and ended, the share late at their last
byte (after their no-bubble timestamp), the share of the warned ones that
were late, and the share of the late ones that were warned. grants: the scheduling packets per 100 data
packets, the share of them that were grants to urgent and to background
flows by reason, and the share that were not grants (scripts/grant-reasons.sh).
With grants on ACKs (transport.safs.grant_carrier_wait_us) the rate per
100 data is of the packets sent alone, and the shares are of every
scheduling message: sent alone, on an ACK (transport_stats.grants_on_acks)
or held for one and never sent (held_grants_not_sent: a newer grant
replaced it).

A directory that is not such a run, or a summary.json without the counts
(a run without the knob), is named with exit status 2.
"""
import glob
import json
import os
import statistics
import sys

# core::GrantReason's names (grant_reason_name), in its order.
REASONS = ["first", "increase", "decrease", "priority", "resume", "refresh"]
KNOBS = {"announcements": "transport.safs.announce_ahead",
         "grants": "transport.safs.report_grant_reasons"}


class BadInput(Exception):
    pass


def load(path, keys, knob, optional=()):
    """The run's counts under `keys` ("section.key"), as floats; those in
    `optional` are 0 when absent (a run without the mechanism that writes
    them)."""
    try:
        with open(path) as f:
            summary = json.load(f)
    except (OSError, ValueError, RecursionError) as e:
        raise BadInput(f"{path}: {e}")
    counts = {}
    for key in keys:
        section, name = key.split(".")
        try:
            section_counts = summary[section]
            counts[key] = float(section_counts[name]) if name in section_counts or \
                key not in optional else 0.0
        except (KeyError, TypeError, ValueError):
            raise BadInput(f"{path}: no {section}.{name} (a run with {knob} = true writes it)")
    return counts


def percent(part, whole):
    if whole <= 0:
        return "-"
    share = 100 * part / whole
    return f"{0.0 if -0.05 < share < 0 else share:.1f}%"  # no "-0.0%"


def announcement_row(mean):
    announced = mean["transport_stats.announcements"]
    warned_late = mean["transport_stats.announced_warned_late"]
    warned = warned_late + mean["transport_stats.announced_warned_on_time"]
    late = warned_late + mean["transport_stats.announced_unwarned_late"]
    ended = warned + mean["transport_stats.announced_unwarned_late"] + \
        mean["transport_stats.announced_unwarned_on_time"]
    return [f"{announced:,.0f}",
            percent(mean["transport_stats.announcements_infeasible"], announced),
            percent(mean["transport_stats.announcements_given_up"], announced),
            percent(mean["transport_stats.flows_on_plans"], announced),
            f"{mean['transport_stats.announcements_dropped']:,.0f}",
            percent(late, ended), percent(warned_late, warned), percent(warned_late, late)]


def grant_row(mean):
    alone = mean["transport_stats.scheduling_packets"]
    row = [f"{100 * alone / max(1.0, mean['transport_stats.data_packets']):.2f}"]
    scheduling = alone + sum(mean[key] for key in HELD_GRANTS)  # every scheduling message
    grants = 0.0
    for kind in ("urgent", "background"):
        row += [percent(mean[f"transport_stats.grants_{kind}_{r}"], scheduling) for r in REASONS]
        grants += sum(mean[f"transport_stats.grants_{kind}_{r}"] for r in REASONS)
    return row + [percent(scheduling - grants, scheduling)]


# Written only with grant_carrier_wait_us: grants sent on ACKs, and held ones never sent.
HELD_GRANTS = ("transport_stats.grants_on_acks", "transport_stats.held_grants_not_sent")


TABLES = {
    "announcements": (
        ["transport_stats.announcements", "transport_stats.announcements_infeasible",
         "transport_stats.announcements_given_up", "transport_stats.flows_on_plans",
         "transport_stats.announcements_dropped", "transport_stats.announced_warned_late",
         "transport_stats.announced_warned_on_time", "transport_stats.announced_unwarned_late",
         "transport_stats.announced_unwarned_on_time"],
        ["announced per run", "warned infeasible", "given up", "started under their plan",
         "dropped (bound)", "late at their last byte", "of the warned: late",
         "of the late: warned"],
        announcement_row),
    "grants": (
        ["transport_stats.scheduling_packets", "transport_stats.data_packets", *HELD_GRANTS]
        + [f"transport_stats.grants_{k}_{r}" for k in ("urgent", "background") for r in REASONS],
        ["scheduling packets per 100 data"]
        + [f"{k} {r}" for k in ("urgent", "background") for r in REASONS]
        + ["not grants (reports, metadata, announcements)"],
        grant_row),
}


def table(kind, runs):
    keys, headers, row = TABLES[kind]
    cells = sorted(glob.glob(os.path.join(glob.escape(runs), "*", "*", "safs")))
    if not cells:
        raise BadInput(f"{runs}: no SCENARIO/VARIANT/safs cells (expected tools/evaluate's --out)")
    lines = ["| scenario | variant | seeds | " + " | ".join(headers) + " |",
             "|---|---|---:|" + "---:|" * len(headers)]
    for cell in cells:
        summaries = sorted(glob.glob(os.path.join(glob.escape(cell), "*", "summary.json")))
        if not summaries:
            continue  # a cell that failed: evaluate named it
        per_run = [load(path, keys, KNOBS[kind], optional=HELD_GRANTS) for path in summaries]
        mean = {key: statistics.fmean(r[key] for r in per_run) for key in keys}
        scenario, variant = cell.split(os.sep)[-3:-1]
        lines.append(f"| {scenario} | {variant} | {len(per_run)} | " + " | ".join(row(mean)) + " |")
    if len(lines) == 2:
        raise BadInput(f"{runs}: no finished run (no SCENARIO/VARIANT/safs/*/summary.json)")
    return "\n".join(lines)


def main(argv):
    if len(argv) != 3 or argv[1] not in TABLES:
        print("usage: mechanism_table.py announcements|grants RUNS", file=sys.stderr)
        return 2
    try:
        print(table(argv[1], argv[2]))
    except BadInput as e:
        print(f"mechanism_table.py: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
