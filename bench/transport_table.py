#!/usr/bin/env python3
"""Table of bench/run-transport-bench.sh: per rank count, 8-byte time and 64 MiB busbw of
SparkCCL over UCX and sockets and of OpenMPI over shared memory and TCP, with UCX's ratios
against OpenMPI's shared memory (the issue's targets: busbw >= 1x, latency <= 1.5x)."""
import os
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
    print("| ranks | setup | 8 B time (us) | 64 MiB busbw (GB/s) |")
    print("|---|---|---|---|")
    ratios = []
    for n in ranks:
        got = {name: rows(os.path.join(out_dir, f"{name}-{n}.txt")) for name in names}
        for name in names:
            lat = got[name].get(8, (float("nan"), 0))[0]
            bw = got[name].get(64 << 20, (0, float("nan")))[1]
            print(f"| {n} | {name} | {lat:.1f} | {bw:.3f} |")
        try:
            bw_ratio = got["ucx"][64 << 20][1] / got["mpi-shm"][64 << 20][1]
            lat_ratio = got["ucx"][8][0] / got["mpi-shm"][8][0]
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
