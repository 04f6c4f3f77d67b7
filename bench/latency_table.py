#!/usr/bin/env python3
"""Medians and one table for bench/run-latency-bench.sh.

  latency_table.py OUT [HEADER_LINE...]      reads OUT/run-*.json and OUT/floor.txt, writes
                                            OUT/summary.json, prints the table (markdown)
  latency_table.py --mpi-json FILE N SETUP [OP]
                                            converts bench/mpi_coll's rows to the perf tool's JSON

Run files are named run-SETUP-nRANKS-pPASS.json; SETUP is TRANSPORT-ALGO for SparkCCL (socket-auto,
ucx-rd, auto-auto, ...), mpi-shm or mpi-tcp.
"""
import glob
import json
import math
import os
import re
import statistics
import sys

LABELS = {
    "auto-auto": "SparkCCL auto (shared memory)",
    "socket-auto": "SparkCCL socket auto",
    "socket-rd": "SparkCCL socket rd",
    "ucx-auto": "SparkCCL ucx auto",
    "ucx-rd": "SparkCCL ucx rd",
    "mpi-tcp": "OpenMPI TCP",
    "mpi-shm": "OpenMPI shm",
}
ORDER = list(LABELS)


def mpi_json(path, ranks, setup, op="allreduce"):
    rows = []
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) >= 9 and w[0].isdigit():
                rows.append({
                    "size": int(w[0]), "count": int(w[1]), "type": w[2],
                    "time_us": float(w[5]), "algbw_GBps": float(w[6]),
                    "busbw_GBps": float(w[7]),
                    "wrong": 0 if w[8] in ("0", "N/A") else int(w[8]),
                })
    json.dump({"operation": op, "ranks": int(ranks), "transport": setup,
               "algo": "-", "rows": rows}, sys.stdout, indent=1)


def size_text(b):
    for unit, s in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= s and b % s == 0:
            return f"{b // s} {unit}"
    return f"{b} B"


def load(out):
    runs = {}
    pat = re.compile(r"run-(.+)-n(\d+)-p(\d+)\.json$")
    for path in sorted(glob.glob(os.path.join(out, "run-*.json"))):
        m = pat.search(os.path.basename(path))
        if not m:
            continue
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError):
            continue  # a failed run left no JSON: its .err says why
        key = (m.group(1), int(m.group(2)))
        for r in doc.get("rows", []):
            r["pass"] = int(m.group(3))
            runs.setdefault(key, {}).setdefault(r["size"], []).append(r)
    return runs


def passes_won(mine, peer):
    """(won, pairs): passes of the same number in which `mine` took at most `peer`'s time. Passes
    run interleaved, so a pair shares the host's load of its minute, which the medians do not."""
    theirs = {r["pass"]: r["time_us"] for r in peer}
    pairs = [(r["time_us"], theirs[r["pass"]]) for r in mine if r["pass"] in theirs]
    return sum(1 for a, b in pairs if a <= b), len(pairs)


def floor(out):
    try:
        with open(os.path.join(out, "floor.txt")) as f:
            m = re.search(r"round trip median ([0-9.]+) us", f.read())
            return float(m.group(1)) if m else None
    except OSError:
        return None


def tcp_floors(out):
    """{layout: {ranks: us}} from OUT/floor-tcp.txt (bench/micro/TcpDoublingFloor.java lines;
    lines without a layout are of one socket per pair, "shared")."""
    floors = {}
    try:
        with open(os.path.join(out, "floor-tcp.txt")) as f:
            pattern = r"loopback TCP(?: \(([a-z-]+)\))?, busy-polled, (\d+) ranks, 8 B: ([0-9.]+) us per call"
            for m in re.finditer(pattern, f.read()):
                floors.setdefault(m.group(1) or "shared", {})[int(m.group(2))] = float(m.group(3))
    except OSError:
        pass
    return floors


def main(out, header):
    runs = load(out)
    rtt = floor(out)
    floors = tcp_floors(out)
    tcp_floor = floors.get("shared", {})
    split_floor = floors.get("split", {})
    series = []
    wrong = []
    for (setup, n), by_size in sorted(runs.items(), key=lambda kv: (kv[0][1], ORDER.index(kv[0][0]) if kv[0][0] in ORDER else 99)):
        sizes = sorted(by_size)
        t = [statistics.median(r["time_us"] for r in by_size[s]) for s in sizes]
        bw = [statistics.median(r["busbw_GBps"] for r in by_size[s]) for s in sizes]
        for s in sizes:
            if any(r.get("wrong", 0) for r in by_size[s]):
                wrong.append(f"{setup} n={n} {size_text(s)}")
        series.append({"setup": setup, "label": LABELS.get(setup, setup), "ranks": n,
                       "sizes": sizes, "time_us": t, "busbw_GBps": bw,
                       "passes_time_us": [[r["time_us"] for r in by_size[s]] for s in sizes]})
    summary = {"header": header, "floor_round_trip_us": rtt,
               "tcp_doubling_floor_us": {str(n): v for n, v in sorted(tcp_floor.items())},
               "tcp_doubling_floor_split_us": {str(n): v for n, v in sorted(split_floor.items())},
               "series": series}
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)

    by = {(s["setup"], s["ranks"]): dict(zip(s["sizes"], zip(s["time_us"], s["busbw_GBps"])))
          for s in series}

    setups = [s for s in ORDER if any(k[0] == s for k in by)]
    setups += sorted({k[0] for k in by if k[0] not in ORDER})
    ranks = sorted({k[1] for k in by})
    sizes = sorted({sz for v in by.values() for sz in v})

    def pick(prefix, n, sz):
        """(median time, setup) of the fastest setup whose name starts with prefix, or None."""
        ts = [(by[(s, n)][sz][0], s) for s in setups if s.startswith(prefix) and sz in by.get((s, n), {})]
        return min(ts) if ts else None

    def ratio(mine, peer, n, sz):
        """`mine` (from pick) over the peer's median, and the passes `mine` won."""
        theirs = by.get((peer, n), {}).get(sz)
        if not mine or not theirs:
            return "-"
        won, pairs = passes_won(runs[(mine[1], n)][sz], runs[(peer, n)][sz])
        return f"{mine[0] / theirs[0]:.2f} ({won}/{pairs})"

    cols = [LABELS.get(s, "SparkCCL " + s.replace("-", " ")) for s in setups]
    cols += ["best socket / MPI TCP", "best ucx / MPI shm", "best auto / MPI shm"]
    print("time per call, us (median of the passes); from 32 KiB on, busbw in GB/s in brackets; after a"
          " ratio, in how many passes its SparkCCL setup took at most the peer's time in the pass of the"
          " same number\n")
    print("| ranks | size | " + " | ".join(cols) + " |")
    print("|---:|---:|" + "---:|" * len(cols))
    best = {}
    for n in ranks:
        for sz in sizes:
            cells = []
            for s in setups:
                v = by.get((s, n), {}).get(sz)
                if v is None:
                    cells.append("-")
                elif sz >= 32 << 10:
                    cells.append(f"{v[0]:.1f} ({v[1]:.2f})")
                else:
                    cells.append(f"{v[0]:.1f}")

            sock, ucx, auto = pick("socket", n, sz), pick("ucx", n, sz), pick("auto", n, sz)
            tcp = by.get(("mpi-tcp", n), {}).get(sz)
            shm = by.get(("mpi-shm", n), {}).get(sz)
            best[(n, sz)] = (sock and sock[0], ucx and ucx[0], tcp and tcp[0], shm and shm[0])
            cells.append(ratio(sock, "mpi-tcp", n, sz))
            cells.append(ratio(ucx, "mpi-shm", n, sz))
            cells.append(ratio(auto, "mpi-shm", n, sz))
            print(f"| {n} | {size_text(sz)} | " + " | ".join(cells) + " |")
    print()
    small = min(sizes) if sizes else None
    if rtt:
        print(f"- Jucx put ping-pong between two processes (same run): round trip {rtt:.2f} us,"
              f" one way {rtt / 2:.2f} us")
    for n in ranks:
        if small is None or (n, small) not in best:
            continue
        sock, ucx, tcp, shm = best[(n, small)]
        parts = []
        if sock and tcp:
            parts.append(f"socket {sock:.1f} us = {sock / tcp:.2f}x OpenMPI TCP ({tcp:.1f} us; target <= 1.0x)")
        if n in tcp_floor:
            f = tcp_floor[n]
            text = (f"recursive doubling between bare Java threads over busy-polled TCP, one socket per"
                    f" pair {f:.1f} us")
            if sock and tcp:
                text += f" (socket = {sock / f:.2f}x, OpenMPI TCP = {tcp / f:.2f}x)"
            parts.append(text)
        if n in split_floor:
            f = split_floor[n]
            text = (f"the same with one socket each way (SparkCCL's ring connections; its point-to-point"
                    f" links share one socket per pair), {f:.1f} us")
            if sock:
                text += f" (socket = {sock / f:.2f}x)"
            parts.append(text)
        if ucx and shm:
            parts.append(f"ucx {ucx:.1f} us = {ucx / shm:.2f}x OpenMPI shm ({shm:.1f} us; target <= 3x)")
        if ucx and rtt:
            parts.append(f"ucx = {ucx / rtt:.2f}x the put round trip (target <= 2x); recursive doubling"
                         f" needs {int(math.log2(n))} one-way puts in a row: {int(math.log2(n)) * rtt / 2:.1f} us")
        if parts:
            print(f"- {n} ranks, {size_text(small)}: " + "; ".join(parts))
    if wrong:
        print("- WRONG RESULTS in: " + ", ".join(wrong))
    else:
        print("- every row checked: wrong = 0 everywhere")
    for line in header:
        print(f"- {line}")


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--mpi-json":
        mpi_json(*sys.argv[2:6])
    else:
        main(sys.argv[1], sys.argv[2:])
