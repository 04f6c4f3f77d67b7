#!/usr/bin/env python3
"""Table of bench/run-transport-bench.sh: per rank count, the median over passes of the 8-byte
time and the 64 MiB busbw of SparkCCL over UCX and sockets and of OpenMPI over shared memory and
TCP, with UCX's ratios against OpenMPI's shared memory (the targets: busbw >= 1x,
8-byte time <= 1.5x). Each pass's figures are listed too."""
import glob
import os
import statistics
import sys


def rows(path):
    """{size: (time_us, busbw)} from the nine-field rows of an nccl-tests style file."""
    out = {}
    if not os.path.isfile(path):
        return out
    for line in open(path, encoding="utf-8", errors="replace"):
        f = line.split()
        if len(f) != 9 or line.lstrip().startswith("#"):
            continue
        try:
            out[int(f[0])] = (float(f[5]), float(f[7]))
        except ValueError:
            pass
    return out


def main():
    out_dir, ranks, notes = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
    names = ["ucx", "socket", "mpi-shm", "mpi-tcp"]
    print("| ranks | setup | 8 B time (us), median | 64 MiB busbw (GB/s), median | passes: time / busbw |")
    print("|---|---|---|---|---|")
    ratios = []
    for n in ranks:
        got = {}
        for name in names:
            passes = [rows(f) for f in sorted(glob.glob(os.path.join(out_dir, f"{name}-{n}-*.txt")))]
            lats = [p[8][0] for p in passes if 8 in p]
            bws = [p[64 << 20][1] for p in passes if (64 << 20) in p]
            lat = statistics.median(lats) if lats else float("nan")
            bw = statistics.median(bws) if bws else float("nan")
            got[name] = (lat, bw)
            each = ", ".join(f"{a:.1f} / {b:.3f}" for a, b in zip(lats, bws))
            print(f"| {n} | {name} | {lat:.1f} | {bw:.3f} | {each} |")
        try:
            bw_ratio = got["ucx"][1] / got["mpi-shm"][1]
            lat_ratio = got["ucx"][0] / got["mpi-shm"][0]
            ratios.append(
                f"{n} ranks: ucx/mpi-shm busbw {bw_ratio:.2f}x (target >= 1),"
                f" ucx/mpi-shm 8 B time {lat_ratio:.2f}x (target <= 1.5)")
        except (KeyError, ZeroDivisionError):
            ratios.append(f"{n} ranks: a run is missing; see {out_dir}")
    print()
    for r in ratios:
        print(f"- {r}")
    print()
    for note in notes:
        print(f"- {note}")


if __name__ == "__main__":
    main()
