"""Summarises an A/B run of the perf tool: lines of `label size time_us` (label old or new),
printed as the median time per size of each and the ratio new/old, the median of the rounds' own
ratios (round k of new over round k of old: in bench/run-checkcalls-bench.sh with PAIRED=1 both
come from one start of the rank processes, which the machine's drift between starts then does not
move) with a 95% confidence interval for that median where there are at least 6 rounds, then
every round's times (in run order), to judge the noise.

The interval is distribution-free (order statistics of the rounds' ratios, from the binomial
distribution): between starts of 8 rank processes on a 16-core host one start's own ratio ranged
0.73-1.14 for the mismatch check over sockets, where it costs nothing measurable, so a claim such
as "at most 5%" needs the interval, not one median.

    python3 bench/ab_summary.py RESULTS OLD_NAME NEW_NAME DESCRIPTION
"""
import math
import statistics
import sys


def median_interval(values: list[float], level: float = 0.95) -> tuple[float, float] | None:
    """The order-statistics interval [v(k), v(n+1-k)] that holds the median with at least
    `level` probability (the largest such k), or None where n is too small for any."""
    n = len(values)
    ordered = sorted(values)
    best = None
    below = 0.0  # P(Binomial(n, 1/2) < k)
    for k in range(1, n // 2 + 1):
        below += math.comb(n, k - 1) / 2**n
        if 1 - 2 * below < level:
            break
        best = (ordered[k - 1], ordered[n - k])
    return best


def main() -> None:
    path, old, new, description = sys.argv[1:5]
    times: dict[tuple[str, str], list[float]] = {}
    sizes: list[str] = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            label, size, us = line.split()
            times.setdefault((size, label), []).append(float(us))
            if size not in sizes:
                sizes.append(size)
    rounds = len(times[(sizes[0], "old")])
    print(f"{description}, median time_us of {rounds} rounds: {old} (old) vs {new} (new)")
    print(
        f"{'size':>18} {'old_us':>10} {'new_us':>10} {'new/old':>8} {'rounds':>8}"
        f" {'rounds 95% CI':>14}"
    )
    for size in sizes:
        o = statistics.median(times[(size, "old")])
        n = statistics.median(times[(size, "new")])
        ratios = [b / a for a, b in zip(times[(size, "old")], times[(size, "new")])]
        interval = median_interval(ratios)
        ci = "n/a" if interval is None else f"{interval[0]:.3f}-{interval[1]:.3f}"
        print(
            f"{size:>18} {o:>10.1f} {n:>10.1f} {n / o:>8.3f}"
            f" {statistics.median(ratios):>8.3f} {ci:>14}"
        )
    for size in sizes:
        for label in ("old", "new"):
            rounds_us = " ".join(f"{t:.1f}" for t in times[(size, label)])
            print(f"# {size} {label}: {rounds_us}")


if __name__ == "__main__":
    main()
