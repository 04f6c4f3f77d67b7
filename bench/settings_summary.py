"""Summarises bench/gpu/run.sh's settings mode: lines of `name size time_us round` in run order,
one line per setting, size and round, OpenMPI's as `openmpi-tcp`. For each setting and size it prints
the median time, its ratio to OpenMPI's median, then the median of the rounds' own ratios (round k
of the setting over round k of OpenMPI, which ran beside it) with a 95% confidence interval for
that median where there are at least 6 rounds (ab_summary.median_interval), then every round's
time in run order.

The rounds' own ratios are what a claim against OpenMPI rests on: on a 16-core host the rounds of
one setting spread 10-47% and OpenMPI's 44-66% (docs/benchmarks.md), and a round's two runs share
the minute's load, which the medians of separate rounds do not.

    python3 bench/settings_summary.py SETTINGS_RUNS
"""
import collections
import statistics
import sys

from ab_summary import median_interval

MPI = "openmpi-tcp"


def summarise(lines: list[str]) -> list[str]:
    # (round, time) per setting and size
    runs: dict[tuple[str, int], list[tuple[str, float]]] = collections.defaultdict(list)
    for line in lines:
        name, size, us, round_ = line.split()
        runs[(name, int(size))].append((round_, float(us)))
    out = [
        f"{'setting':<24} {'bytes':>10} {'median_us':>10} {'over_mpi':>8}"
        f" {'rounds':>7} {'rounds 95% CI':>14}  passes (us)"
    ]
    for (name, size), passes in sorted(runs.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        times = [t for _, t in passes]
        median = statistics.median(times)
        mpi = dict(runs.get((MPI, size), []))
        # a round whose start failed has no line: ratios pair by round, not by position
        ratios = [t / mpi[r] for r, t in passes if r in mpi] if name != MPI else []
        over = f"{median / statistics.median(mpi.values()):.2f}" if mpi else "-"
        paired, ci = "-", "-"
        if ratios:
            paired = f"{statistics.median(ratios):.3f}"
            interval = median_interval(ratios)
            ci = "n/a" if interval is None else f"{interval[0]:.3f}-{interval[1]:.3f}"
        out.append(
            f"{name:<24} {size:>10} {median:>10.1f} {over:>8} {paired:>7} {ci:>14}  "
            + " ".join(f"{t:.0f}" for t in times)
        )
    return out


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        print("\n".join(summarise(f.readlines())))


if __name__ == "__main__":
    main()
