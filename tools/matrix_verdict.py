# SAFS's verdict in one cell of the evaluation matrix, against the best other
# transport: one rule for tools/evaluate's report and tools/compare-levels.
"""The verdict of a cell: "best", "within 2%" or "worse"."""

TIE = 0.02  # SAFS within 2% of the best counts as a tie


def verdict(compare, safs_mean, best_other_mean):
    """`compare` is the scenario's: "ratio" (SAFS over the best other, lower is better) or
    "difference" (SAFS minus it, for metrics that cross zero, where there is no tie)."""
    if compare == "difference":
        return "best" if safs_mean - best_other_mean <= 0 else "worse"
    ratio = safs_mean / best_other_mean
    return "best" if ratio <= 1 else "within 2%" if ratio <= 1 + TIE else "worse"
