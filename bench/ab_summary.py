"""Summarises an A/B run of the perf tool: lines of `label size time_us` (label old or new),
printed as the median time per size of each and the ratio new/old, the median of the rounds' own
ratios (round k of new over round k of old: in bench/run-checkcalls-bench.sh with PAIRED=1 both
come from one start of the rank processes, which the machine's drift between starts then does not
move), then every round's times (in run order), to judge the noise.

    python3 bench/ab_summary.py RESULTS OLD_NAME NEW_NAME DESCRIPTION
"""
import statistics
import sys


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
    print(f"{'size':>18} {'old_us':>10} {'new_us':>10} {'new/old':>8} {'rounds':>8}")
    for size in sizes:
        o = statistics.median(times[(size, "old")])
        n = statistics.median(times[(size, "new")])
        paired = statistics.median(
            b / a for a, b in zip(times[(size, "old")], times[(size, "new")])
        )
        print(f"{size:>18} {o:>10.1f} {n:>10.1f} {n / o:>8.3f} {paired:>8.3f}")
    for size in sizes:
        for label in ("old", "new"):
            rounds_us = " ".join(f"{t:.1f}" for t in times[(size, label)])
            print(f"# {size} {label}: {rounds_us}")


if __name__ == "__main__":
    main()
