"""The table of scripts/versus-priority.sh: per cell of the evaluation matrix,
SAFS against the better of the two static priority classes (`dctcp-prio`,
`d2tcp-prio`; the one with the better mean over the seeds).

  versus_priority_table.py LEVEL RUNS

RUNS is the tools/evaluate output directory of that level with those three
transports. Every metric of the matrix is lower-is-better (iteration time,
p99 TPOT, urgent misses), as tools/evaluate's best-other rule assumes too.
The cells' directories, seeds, confidence intervals and the verdict (best,
within 2%, worse) are tools/evaluate's own (its functions, not copies);
the last column says whether the two intervals leave each other.
"""
import csv
import importlib.machinery
import importlib.util
import os
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


def main(level, runs):
    try:
        _, seeds, scenarios = evaluate.load_matrix(
            os.path.join("scenarios", "eval", "matrix.toml"), level)
    except evaluate.BadInput as e:
        print(f"versus_priority_table.py: {e}", file=sys.stderr)
        return 2
    print("| scenario | variant | metric | SAFS | priority class | its result | SAFS vs it "
          "| seeds SAFS better / level / worse | verdict | intervals |")
    print("|---|---|---|---:|---|---:|---:|---|---|---|")
    left_out = []
    for s in scenarios:
        for v in s["variants"]:
            name = f"{s['name']} / {v['name']}"
            cell = {t: per_seed(evaluate.cell_dir(runs, s, v, t), s["metric"], s["scale"])
                    for t in ("safs",) + PRIORITY_CLASSES}
            # A cell counts only with every seed of the level, as in tools/evaluate.
            whole = [t for t in PRIORITY_CLASSES if len(cell[t]) == seeds]
            if len(cell["safs"]) != seeds or not whole:
                left_out.append(name)
                continue
            best = min(whole, key=lambda t: interval(cell[t].values())[0])
            safs_mean, safs_ci = interval(cell["safs"].values())
            best_mean, best_ci = interval(cell[best].values())
            if s["compare"] == "ratio":
                versus = f"{safs_mean / best_mean:.3f}" if best_mean else "-"
            else:
                versus = f"{safs_mean - best_mean:+.3f} (difference)"
            common = sorted(set(cell["safs"]) & set(cell[best]))
            better = sum(cell["safs"][k] < cell[best][k] for k in common)
            worse = sum(cell["safs"][k] > cell[best][k] for k in common)
            verdict = (matrix_verdict.verdict(s["compare"], safs_mean, best_mean)
                       if best_mean or s["compare"] == "difference" else "-")
            print(f"| {s['name']} | {v['name']} | {s['label']} | {shown(safs_mean, safs_ci)} "
                  f"| {best} | {shown(best_mean, best_ci)} | {versus} "
                  f"| {better} / {len(common) - better - worse} / {worse} | {verdict} "
                  f"| {apart(safs_mean, safs_ci, best_mean, best_ci)} |")
    if left_out:
        print()
        print("Cells left out (a transport without every seed of the level): "
              + "; ".join(left_out) + ".")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(*sys.argv[1:]))
