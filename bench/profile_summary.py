#!/usr/bin/env python3
"""Summarises the CPU profiles bench/profile.sh writes: where each kind of thread spends its time.

Reads every *.collapsed file in a directory (async-profiler's collapsed stacks with thread names,
one file per JVM), keeps the rank processes (those with a proxy thread), groups threads by name
with numbers folded (``sparkccl-proxy-r3`` and ``-r5`` are one group) and prints, per group, its
CPU time (milliseconds a rank process: samples x interval / rank processes), the frames most often
on top of the stack (self time) and the frames matching --match anywhere on it (inclusive time).
With --calls (every call the run made: JIT warm-up, warm-up and timed), sample counts become
microseconds a call of one rank: samples x interval / calls / rank processes. Run long enough that
the steady state outweighs start-up and compilation.

Usage: profile_summary.py DIR [--calls N] [--interval-us 100] [--top 25] [--match REGEX]
       [--min-share 0.005] [--per-process]
"""

import argparse
import collections
import os
import re
import sys

DEFAULT_MATCH = r"^org/sparkccl/|^(read|writev|write|__GI_read|__libc_read)$"


def group_of(thread):
    """'[sparkccl-proxy-r3 tid=123]' -> 'sparkccl-proxy-rN'."""
    name = re.sub(r"\s*tid=\d+", "", thread.strip("[]")).strip() or "unnamed"
    return re.sub(r"\d+", "N", name)


def read_profile(path):
    """Returns {group: (total, Counter(self frame), Counter(frame anywhere))}."""
    totals = collections.Counter()
    selfs = collections.defaultdict(collections.Counter)
    inclusive = collections.defaultdict(collections.Counter)
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            if not stack or not count.isdigit():
                continue
            n = int(count)
            frames = stack.split(";")
            group = group_of(frames[0])
            totals[group] += n
            selfs[group][frames[-1]] += n
            for frame in set(frames[1:]):
                inclusive[group][frame] += n
    return {g: (totals[g], selfs[g], inclusive[g]) for g in totals}


def is_rank(profile):
    """A rank process has a proxy thread; the perf tool's launcher has none."""
    return any(g.startswith("sparkccl-proxy-") for g in profile)


def merge(profiles):
    merged = {}
    for p in profiles:
        for g, (t, s, i) in p.items():
            if g not in merged:
                merged[g] = [0, collections.Counter(), collections.Counter()]
            merged[g][0] += t
            merged[g][1].update(s)
            merged[g][2].update(i)
    return merged


def report(title, profile, ranks, args, out):
    if args.calls:
        scale = args.interval_us / args.calls / ranks
        unit = "us a call of one rank"
    else:
        scale = args.interval_us / 1000.0 / ranks
        unit = "ms of CPU a rank process"

    def fmt(n):
        return f"{n * scale:9.3f}"

    out.write(f"# {title}: {ranks} rank process(es); figures in {unit}\n")
    groups = sorted(profile.items(), key=lambda kv: -kv[1][0])
    grand = sum(t for t, _, _ in profile.values()) or 1
    match = re.compile(args.match)
    for g, (total, selfs, inclusive) in groups:
        if total < args.min_share * grand:
            continue
        out.write(f"\n## {g}: {fmt(total).strip()} ({100.0 * total / grand:.1f}% of all samples)\n")
        out.write("self (top of stack):\n")
        for frame, n in selfs.most_common(args.top):
            out.write(f"  {fmt(n)}  {frame}\n")
        shown = [(f, n) for f, n in inclusive.most_common() if match.search(f)][: args.top]
        if shown:
            out.write(f"inclusive (frames matching {args.match}):\n")
            for frame, n in shown:
                out.write(f"  {fmt(n)}  {frame}\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--calls", type=int, default=0, help="timed calls of the run (per rank)")
    ap.add_argument("--interval-us", type=float, default=100.0, help="the sampling interval")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--match", default=DEFAULT_MATCH, help="frames to show inclusively (regex)")
    ap.add_argument("--min-share", type=float, default=0.005, help="hide smaller thread groups")
    ap.add_argument("--per-process", action="store_true", help="one report per rank process")
    args = ap.parse_args(argv)
    files = sorted(f for f in os.listdir(args.dir) if f.endswith(".collapsed"))
    profiles = [(f, read_profile(os.path.join(args.dir, f))) for f in files]
    ranks = [(f, p) for f, p in profiles if is_rank(p)]
    if not ranks:
        sys.exit(f"no rank process profile (*.collapsed with an engine thread) in {args.dir}")
    if args.per_process:
        for f, p in ranks:
            report(f, p, 1, args, sys.stdout)
            sys.stdout.write("\n")
    else:
        report(args.dir, merge(p for _, p in ranks), len(ranks), args, sys.stdout)


if __name__ == "__main__":
    main()
