#!/usr/bin/env python3
"""The median of a benchmark's per-round overheads with a distribution-free confidence interval,
and what it says against a budget.

Rounds of a training job differ by several percent (GPU clocks, CPU placement), so a median of a
few rounds cannot say whether a profiler costs less than 1%. The interval runs between two order
statistics of the rounds, chosen from the binomial distribution so that it holds the true median
with at least the asked confidence whatever the rounds' distribution (no normality assumed). The
verdict against a budget: "within" when the whole interval lies at or below it, "over" when it lies
above, "unresolved" when it straddles the budget (more rounds narrow it), "too few rounds" below
6 rounds at 95%, where no such interval exists.

usage: median_interval.py [--confidence 0.95] [--budget PERCENT] VALUE...
prints: median low high verdict   (verdict "-" without a budget)
"""
import argparse
import math
import statistics
import sys


def median_interval(values, confidence=0.95):
    """(low, high) order statistics holding the median with at least `confidence`; None when the
    rounds are too few for any such interval."""
    ordered = sorted(values)
    n = len(ordered)
    depth = 0  # how many values each end drops
    below = 0.0  # P(Binomial(n, 1/2) <= depth)
    while depth < n // 2:
        below += math.comb(n, depth) / 2**n
        if 2 * below > 1 - confidence:
            break
        depth += 1
    if depth == 0:
        return None
    return ordered[depth - 1], ordered[n - depth]


def verdict(interval, budget):
    if budget is None:
        return "-"
    if interval is None:
        return "too-few-rounds"
    low, high = interval
    return "within" if high <= budget else "over" if low > budget else "unresolved"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--confidence", type=float, default=0.95)
    parser.add_argument("--budget", type=float)
    parser.add_argument("values", type=float, nargs="+")
    args = parser.parse_args()
    if not 0 < args.confidence < 1:
        parser.error("--confidence must lie between 0 and 1")
    interval = median_interval(args.values, args.confidence)
    low, high = interval if interval else (math.nan, math.nan)
    print(f"{statistics.median(args.values):.3f} {low:.3f} {high:.3f} {verdict(interval, args.budget)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
