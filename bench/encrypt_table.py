#!/usr/bin/env python3
"""Table of bench/run-encrypt-bench.sh: the median over passes of the 8-byte time and of the 1 MiB
and 64 MiB busbw of SparkCCL's socket transport without and with encryption, and of OpenMPI over
TCP, with encryption's ratios against the plain socket transport. Each pass's figures are listed
too."""
import glob
import os
import statistics
import sys

from transport_table import rows

SIZES = [(8, "8 B time (us)", 0), (1 << 20, "1 MiB busbw (GB/s)", 1), (64 << 20, "64 MiB busbw (GB/s)", 1)]


def main():
    out_dir, notes = sys.argv[1], sys.argv[2:]
    names = ["plain", "encrypted", "mpi-tcp"]
    print("| setup | " + " | ".join(label + ", median" for _, label, _ in SIZES) + " | passes |")
    print("|---|" + "---|" * len(SIZES) + "---|")
    medians = {}
    for name in names:
        passes = [rows(f) for f in sorted(glob.glob(os.path.join(out_dir, f"{name}-*.txt")))]
        cells, each = [], []
        for size, _, field in SIZES:
            values = [p[size][field] for p in passes if size in p]
            m = statistics.median(values) if values else float("nan")
            medians[(name, size)] = m
            cells.append(f"{m:.3f}" if field else f"{m:.1f}")
            each.append("/".join(f"{v:.3g}" for v in values))
        print(f"| {name} | " + " | ".join(cells) + " | " + "; ".join(each) + " |")
    print()
    for size, label, field in SIZES:
        try:
            r = medians[("encrypted", size)] / medians[("plain", size)]
            print(f"- {label}: encrypted / plain = {r:.2f}x")
        except (KeyError, ZeroDivisionError):
            print(f"- {label}: a run is missing; see {out_dir}")
    print()
    for note in notes:
        print(f"- {note}")


if __name__ == "__main__":
    main()
