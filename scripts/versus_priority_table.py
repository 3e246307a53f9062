"""The table of scripts/versus-priority.sh: per cell of the evaluation matrix,
SAFS against the better of the two static priority classes (`dctcp-prio`,
`d2tcp-prio`; the one with the better mean over the seeds).

  versus_priority_table.py LEVEL RUNS [VARIANT_RUNS LABEL]

RUNS is the tools/evaluate output directory of that level with those three
transports. VARIANT_RUNS, when given, holds SAFS alone with some knobs set
(LABEL says which): the table then compares that SAFS with the class, and
shows it beside SAFS with its defaults, with the packets the switches
dropped in both. Every metric of the matrix is lower-is-better (iteration time,
p99 TPOT, urgent misses), as tools/evaluate's best-other rule assumes too.
The cells' directories, seeds, confidence intervals and the verdict (best,
within 2%, worse) are tools/evaluate's own (its functions, not copies);
the last column says whether the two intervals leave each other.
"""
import csv
import glob
import importlib.machinery
import importlib.util
import json
import os
import statistics
import sys

sys.path.insert(0, "tools")  # tools/evaluate's modules sit beside it
_loader = importlib.machinery.SourceFileLoader("evaluate", "tools/evaluate")
evaluate = importlib.util.module_from_spec(importlib.util.spec_from_loader("evaluate", _loader))
_loader.exec_module(evaluate)
import matrix_verdict  # noqa: E402 (beside tools/evaluate)

PRIORITY_CLASSES = ("dctcp-prio", "d2tcp-prio")


def per_seed(directory, metric, scale):
    """{seed: value} of one cell (empty when the cell did not run)."""
    path = os.path.join(directory, "sweep.csv")
    if not os.path.isfile(path):
        return {}
    with open(path, newline="") as f:
        return {int(r["simulation.seed"]): float(r[metric]) * scale for r in csv.DictReader(f)
                if r.get(metric) not in (None, "", "null")}


def mean_drops(directory):
    """Packets the switches dropped, the mean per run of one cell's seeds ("-": none ran)."""
    drops = []
    for summary in sorted(glob.glob(os.path.join(directory, "*", "summary.json"))):
        with open(summary) as f:
            drops.append(json.load(f)["network"]["queue_drops"])
    return f"{statistics.fmean(drops):,.0f}" if drops else "-"


def interval(values):
    """Mean and 95% half-width (None for one value), tools/evaluate's."""
    return evaluate.mean_ci(list(values))


def shown(mean, ci):
    return f"{evaluate.fmt(mean)} ± {evaluate.fmt(ci)}" if ci is not None else evaluate.fmt(mean)


def apart(safs_mean, safs_ci, best_mean, best_ci):
    """Whether the two 95% intervals leave each other."""
    if safs_ci is None or best_ci is None:
        return "one seed"
    if safs_mean + safs_ci < best_mean - best_ci:
        return "SAFS ahead, intervals apart"
    if safs_mean - safs_ci > best_mean + best_ci:
        return "SAFS behind, intervals apart"
    return "intervals overlap"


def main(level, runs, variant_runs=None, label=None):
    try:
        _, seeds, scenarios = evaluate.load_matrix(
            os.path.join("scenarios", "eval", "matrix.toml"), level)
    except evaluate.BadInput as e:
        print(f"versus_priority_table.py: {e}", file=sys.stderr)
        return 2
    # A directory that is not there gives a table of empty cells: say so instead.
    for option, directory in (("RUNS", runs), ("VARIANT_RUNS", variant_runs)):
        if directory is not None and not os.path.isdir(directory):
            print(f"versus_priority_table.py: {option} {directory}: not a directory "
                  "(a tools/evaluate output directory)", file=sys.stderr)
            return 2
    head = "| scenario | variant | metric | SAFS |"
    rule = "|---|---|---|---:|"
    if variant_runs:
        head += f" SAFS, {label} | vs SAFS | drops per run: SAFS | {label} |"
        rule += "---:|---:|---:|---:|"
    compared = f"SAFS, {label}," if variant_runs else "SAFS"
    head += (f" priority class | its result | {compared} vs it "
             f"| seeds {compared} better / level / worse | verdict | intervals |")
    rule += "---|---:|---:|---|---|---|"
    print(head)
    print(rule)
    left_out = []
    for s in scenarios:
        for v in s["variants"]:
            name = f"{s['name']} / {v['name']}"
            cell = {t: per_seed(evaluate.cell_dir(runs, s, v, t), s["metric"], s["scale"])
                    for t in ("safs",) + PRIORITY_CLASSES}
            defaults = cell["safs"]
            if variant_runs:
                cell["safs"] = per_seed(evaluate.cell_dir(variant_runs, s, v, "safs"),
                                        s["metric"], s["scale"])
            # A cell counts only with every seed of the level, as in tools/evaluate.
            whole = [t for t in PRIORITY_CLASSES if len(cell[t]) == seeds]
            if len(cell["safs"]) != seeds or len(defaults) != seeds or not whole:
                left_out.append(name)
                continue
            best = min(whole, key=lambda t: interval(cell[t].values())[0])
            safs_mean, safs_ci = interval(cell["safs"].values())
            best_mean, best_ci = interval(cell[best].values())
            common = sorted(set(cell["safs"]) & set(cell[best]))
            better = sum(cell["safs"][k] < cell[best][k] for k in common)
            worse = sum(cell["safs"][k] > cell[best][k] for k in common)
            verdict = (matrix_verdict.verdict(s["compare"], safs_mean, best_mean)
                       if best_mean or s["compare"] == "difference" else "-")
            row = f"| {s['name']} | {v['name']} | {s['label']} |"
            if variant_runs:
                defaults_mean, defaults_ci = interval(defaults.values())
                row += (f" {shown(defaults_mean, defaults_ci)} | {shown(safs_mean, safs_ci)} "
                        f"| {versus(s, safs_mean, defaults_mean)} "
                        f"| {mean_drops(evaluate.cell_dir(runs, s, v, 'safs'))} "
                        f"| {mean_drops(evaluate.cell_dir(variant_runs, s, v, 'safs'))} |")
            else:
                row += f" {shown(safs_mean, safs_ci)} |"
            print(row + f" {best} | {shown(best_mean, best_ci)} | {versus(s, safs_mean, best_mean)} "
                  f"| {better} / {len(common) - better - worse} / {worse} | {verdict} "
                  f"| {apart(safs_mean, safs_ci, best_mean, best_ci)} |")
    if left_out:
        print()
        print("Cells left out (a transport without every seed of the level): "
              + "; ".join(left_out) + ".")
    return 0


def versus(s, mean, other):
    """A ratio, or a difference for the scenarios compared by difference."""
    if s["compare"] == "ratio":
        return f"{mean / other:.3f}" if other else "-"
    return f"{mean - other:+.3f} (difference)"


if __name__ == "__main__":
    if len(sys.argv) not in (3, 5):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
