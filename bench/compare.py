#!/usr/bin/env python3
"""Compare SparkCCL collective results with OpenMPI baselines (stdlib only).

Every input file holds rows of one operation in the nccl-tests-like format
shared by bin/sparkccl-perf and bench/mpi_coll ('#' lines are ignored):

    size count type redop root time_us algbw_GBps busbw_GBps wrong

Rows are joined by size. A missing or empty file just yields 'n/a' columns.
Rows of the same size whose count/type/redop/root differ between SparkCCL and
an MPI run are reported (a convention mismatch would make the join wrong).

--op names the operation (title "<op>: SparkCCL vs OpenMPI" unless --title);
--section writes a '##' section without the default header notes, so that
several reports can be concatenated under one header (see
bench/run-collectives-bench.sh).

Example:
    compare.py --sparkccl bench/build/sparkccl.txt \
               --mpi-tcp bench/build/mpi_tcp.txt \
               --mpi-shm bench/build/mpi_shm.txt \
               --note "Date: ..." --cmd "SparkCCL: bin/sparkccl-perf ..." \
               --out bench/build/allreduce.md
"""
import argparse
import os
import platform
import sys
import time


def parse(path):
    """Return {size: row dict} for the 9-field data rows of path."""
    rows = {}
    if not path or not os.path.isfile(path):
        return rows
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            fields = line.split()
            if len(fields) != 9:
                continue
            try:
                size = int(fields[0])
                row = {
                    "size": size,
                    "count": int(fields[1]),
                    "type": fields[2],
                    "redop": fields[3],
                    "root": int(fields[4]),
                    "time_us": float(fields[5]),
                    "algbw": float(fields[6]),
                    "busbw": float(fields[7]),
                    "wrong": fields[8],
                }
            except ValueError:
                continue  # e.g. a log line that happens to have 9 words
            rows[size] = row
    return rows


def human(size):
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if size >= div and size % div == 0:
            return f"{size // div} {unit}iB"
    return f"{size} B"


def fmt(v, spec):
    return "n/a" if v is None else format(v, spec)


def ratio(a, b):
    if a is None or b is None or b == 0:
        return None
    return a / b


def get(rows, size, key):
    r = rows.get(size)
    return None if r is None else r[key]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sparkccl", help="bin/sparkccl-perf output")
    ap.add_argument("--mpi-tcp", help="mpi_coll output over TCP")
    ap.add_argument("--mpi-shm", help="mpi_coll output, default transports")
    ap.add_argument("--op", help="operation label, e.g. allreduce or broadcast")
    ap.add_argument("--section", action="store_true",
                    help="write a '##' section without default header notes")
    ap.add_argument("--note", action="append", default=[],
                    help="header line (repeatable), e.g. 'Date: ...'")
    ap.add_argument("--cmd", action="append", default=[],
                    help="command that was run (repeatable), shown verbatim")
    ap.add_argument("--title",
                    help="default: '<op>: SparkCCL vs OpenMPI' "
                         "(op defaults to Allreduce)")
    ap.add_argument("--out", help="also write the Markdown report here")
    a = ap.parse_args()

    spark = parse(a.sparkccl)
    tcp = parse(a.mpi_tcp)
    shm = parse(a.mpi_shm)
    have_shm = bool(shm)

    title = a.title or f"{a.op or 'Allreduce'}: SparkCCL vs OpenMPI"
    notes = a.note
    if not notes and not a.section:
        notes = [
            "Date: " + time.strftime("%a %b %d %H:%M:%S UTC %Y", time.gmtime()),
            "Machine: " + " ".join(platform.uname()),
            f"nproc: {os.cpu_count()}",
        ]

    out = [("## " if a.section else "# ") + title, ""]
    out += [f"- {n}" for n in notes]
    for label, path, rows in (("SparkCCL", a.sparkccl, spark),
                              ("MPI-TCP", a.mpi_tcp, tcp),
                              ("MPI-shm", a.mpi_shm, shm)):
        if path and not rows:
            out.append(f"- {label}: no results ({path} missing or empty)")
    if a.cmd:
        out += ["", "Commands:", "", "```"] + a.cmd + ["```"]
    if out[-1]:
        out.append("")

    head = ["size", "SparkCCL time_us", "SparkCCL busbw GB/s",
            "MPI-TCP time_us", "MPI-TCP busbw GB/s",
            "busbw SparkCCL/MPI-TCP", "time SparkCCL/MPI-TCP"]
    if have_shm:
        head += ["MPI-shm time_us", "MPI-shm busbw GB/s"]
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "|".join("---:" for _ in head) + "|")

    sizes = sorted(set(spark) | set(tcp) | set(shm))
    for s in sizes:
        st, sb = get(spark, s, "time_us"), get(spark, s, "busbw")
        tt, tb = get(tcp, s, "time_us"), get(tcp, s, "busbw")
        cells = [human(s), fmt(st, ".2f"), fmt(sb, ".4f"), fmt(tt, ".2f"),
                 fmt(tb, ".4f"), fmt(ratio(sb, tb), ".2f"),
                 fmt(ratio(st, tt), ".2f")]
        if have_shm:
            cells += [fmt(get(shm, s, "time_us"), ".2f"),
                      fmt(get(shm, s, "busbw"), ".4f")]
        out.append("| " + " | ".join(cells) + " |")

    # Correctness: any row whose 'wrong' field is not 0.
    bad = []
    for label, rows in (("SparkCCL", spark), ("MPI-TCP", tcp), ("MPI-shm", shm)):
        for s in sorted(rows):
            if rows[s]["wrong"] != "0":
                bad.append(f"{label} @ {human(s)}: wrong = {rows[s]['wrong']}")
    out.append("")
    if bad:
        out.append("**WARNING: wrong results:** " + "; ".join(bad))
    else:
        out.append("All checked rows have wrong = 0.")

    # Conventions: the same size must mean the same row in every file.
    mismatch = []
    for label, rows in (("MPI-TCP", tcp), ("MPI-shm", shm)):
        for s in sorted(set(spark) & set(rows)):
            diff = [f"{k} {spark[s][k]} vs {rows[s][k]}"
                    for k in ("count", "type", "redop", "root")
                    if spark[s][k] != rows[s][k]]
            if diff:
                mismatch.append(f"{label} @ {human(s)}: " + ", ".join(diff))
    if mismatch:
        out.append("")
        out.append("**WARNING: rows differ in conventions (SparkCCL vs MPI):** "
                   + "; ".join(mismatch))

    # Summary: busbw ratio at the largest size, latency ratio at the smallest
    # (8 B by default) size, each over the sizes both runs measured.
    common = sorted(set(spark) & set(tcp))
    out += ["", "Summary:", ""]
    if common:
        big, small = common[-1], common[0]
        out.append(f"- busbw SparkCCL/MPI-TCP at {human(big)}: "
                   f"{fmt(ratio(spark[big]['busbw'], tcp[big]['busbw']), '.2f')} "
                   f"({spark[big]['busbw']:.3f} vs {tcp[big]['busbw']:.3f} GB/s)")
        out.append(f"- time SparkCCL/MPI-TCP at {human(small)}: "
                   f"{fmt(ratio(spark[small]['time_us'], tcp[small]['time_us']), '.2f')} "
                   f"({spark[small]['time_us']:.2f} vs {tcp[small]['time_us']:.2f} us)")
    else:
        out.append("- SparkCCL vs MPI-TCP: n/a (no sizes measured by both)")
    for label, rows in (("MPI-TCP", tcp), ("MPI-shm", shm)):
        if rows:
            big, small = max(rows), min(rows)
            out.append(f"- {label}: busbw {rows[big]['busbw']:.3f} GB/s at "
                       f"{human(big)}, time {rows[small]['time_us']:.2f} us at "
                       f"{human(small)}")

    text = "\n".join(out) + "\n"
    sys.stdout.write(text)
    if a.out:
        with open(a.out, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
