#!/usr/bin/env python3
"""PNG plots of time per call and busbw against size, SparkCCL beside its peers.

  plot_bench.py SUMMARY.json OUTDIR [PREFIX]   a summary of bench/latency_table.py: one PNG per
                                              rank count, OUTDIR/PREFIXlatency-nN.png (allReduce)
                                              or OUTDIR/PREFIXOP-nN.png
  plot_bench.py --perf OUT.png TITLE A.json [B.json ...]
                                              files the perf tool wrote with --json (or
                                              latency_table.py --mpi-json): one line each

Each PNG has two panels: time per call (log-log) and busbw (GB/s, log size axis). Small files
(about 50 KB) so that docs can carry them.
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STYLE = {
    "auto-auto": ("tab:purple", "-", "D"),
    "socket-auto": ("tab:blue", "-", "o"),
    "socket-rd": ("tab:blue", "--", "s"),
    "ucx-auto": ("tab:green", "-", "o"),
    "ucx-rd": ("tab:green", "--", "s"),
    "mpi-tcp": ("tab:red", "-", "^"),
    "mpi-shm": ("tab:orange", "-", "v"),
}


def size_label(b):
    for unit, s in (("M", 1 << 20), ("K", 1 << 10)):
        if b >= s and b % s == 0:
            return f"{b // s}{unit}"
    return str(b)


def draw(series, title, path, floor=None):
    fig, (ax_t, ax_b) = plt.subplots(1, 2, figsize=(10, 3.8), dpi=80)
    for s in series:
        color, ls, marker = STYLE.get(s["setup"], (None, "-", "."))
        kw = dict(color=color, linestyle=ls, marker=marker, markersize=4, linewidth=1.4, label=s["label"])
        ax_t.plot(s["sizes"], s["time_us"], **kw)
        ax_b.plot(s["sizes"], s["busbw_GBps"], **kw)
    if floor:
        ax_t.axhline(floor, color="gray", linestyle=":", linewidth=1, label="Jucx put round trip")
    sizes = sorted({x for s in series for x in s["sizes"]})
    for ax in (ax_t, ax_b):
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes)
        ax.set_xticklabels([size_label(x) for x in sizes], fontsize=8)
        ax.set_xlabel("message size (bytes)")
        ax.grid(True, which="major", alpha=0.3)
    ax_t.set_yscale("log")
    ax_b.set_yscale("log")
    ax_t.set_ylabel("time per call (us), lower is better")
    ax_b.set_ylabel("busbw (GB/s), higher is better")
    ax_t.legend(fontsize=7, loc="upper left")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    print(f"wrote {path}")


def from_summary(path, outdir, prefix=""):
    with open(path) as f:
        doc = json.load(f)
    machine = next((h.split(": ", 1)[1] for h in doc.get("header", []) if h.startswith("Machine:")), "")
    idle = next((h.split(": ", 1)[1].split(",")[0] for h in doc.get("header", []) if h.startswith("SparkCCL:")), "")
    for n in sorted({s["ranks"] for s in doc["series"]}):
        series = [s for s in doc["series"] if s["ranks"] == n]
        op = next((h.split(": ", 1)[1].split()[0] for h in doc.get("header", []) if h.startswith("Operation:")), "allreduce")
        title = f"{op} float32, {n} rank processes ({idle}); {machine}"
        name = "latency" if op == "allreduce" else op
        draw(series, title, f"{outdir}/{prefix}{name}-n{n}.png", doc.get("floor_round_trip_us"))


def from_perf(out, title, files):
    series = []
    for p in files:
        with open(p) as f:
            doc = json.load(f)
        rows = sorted(doc["rows"], key=lambda r: r["size"])
        setup = f"{doc.get('transport')}-{doc.get('algo')}"
        series.append({"setup": setup, "label": f"{doc.get('transport')} {doc.get('algo')} n={doc.get('ranks')}",
                       "sizes": [r["size"] for r in rows], "time_us": [r["time_us"] for r in rows],
                       "busbw_GBps": [r["busbw_GBps"] for r in rows]})
    draw(series, title, out)


if __name__ == "__main__":
    if sys.argv[1] == "--perf":
        from_perf(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        from_summary(sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "")
