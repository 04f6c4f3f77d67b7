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

Where the profile has the OS kernel's frames (async-profiler marks them ``_[k]``; they need
``kernel.perf_event_paranoid`` 1 or lower, or root), each group's socket system calls are split
by what the kernel did in them: a read into copying data out of the socket, processing segments
that arrived while the reader held the socket (the backlog, ``__release_sock``), sending
acknowledgements (window updates), and the rest (entering the call, locking, reads that found
nothing); a write into copying data in, handing segments to a receiving socket of this host
(loopback: the sender's core runs the receiver's TCP input, ``net_rx_action``), and the rest.
--match sees kernel frames without their ``_[k]``.

Usage: profile_summary.py DIR [--calls N] [--interval-us 100] [--top 25] [--match REGEX]
       [--min-share 0.005] [--per-process]
"""

import argparse
import collections
import os
import re
import sys

DEFAULT_MATCH = r"^org/sparkccl/|^(read|writev|write|__GI_read|__libc_read)$"
KERNEL_SUFFIX = "_[k]"

# A stack is a socket read or write by the JDK's socket methods on it (every engine socket is NIO's;
# libc's read alone would count a compiler thread's file reads too); the kernel frames below them
# say what the call did.
READ_FRAMES = {"sun/nio/ch/SocketDispatcher.read", "sun/nio/ch/SocketDispatcher.read0"}
WRITE_FRAMES = {"sun/nio/ch/SocketDispatcher.write", "sun/nio/ch/SocketDispatcher.writev"}
# (part, kernel frames that put a sample there), checked in order; a sample in none is "other"
READ_PARTS = [
    ("data copy", {"_copy_to_iter", "skb_copy_datagram_iter", "__skb_datagram_iter",
                   "simple_copy_to_iter"}),
    ("backlog", {"__release_sock"}),
    ("acks sent", {"__tcp_transmit_skb", "tcp_send_ack", "__tcp_send_ack"}),
]
WRITE_PARTS = [
    ("data copy", {"_copy_from_iter", "skb_copy_to_page_nocache", "_copy_from_iter_nocache"}),
    ("delivery to a local socket",
     {"net_rx_action", "process_backlog", "tcp_v4_rcv", "tcp_v6_rcv"}),
]
SOCKET_CALLS = (("read", READ_FRAMES, READ_PARTS), ("write", WRITE_FRAMES, WRITE_PARTS))


def group_of(thread):
    """'[sparkccl-proxy-r3 tid=123]' -> 'sparkccl-proxy-rN'."""
    name = re.sub(r"\s*tid=\d+", "", thread.strip("[]")).strip() or "unnamed"
    return re.sub(r"\d+", "N", name)


def socket_part(frames):
    """('read' or 'write', part) for a stack (its set of frames) in a socket system call, else
    None."""
    names = {f.removesuffix(KERNEL_SUFFIX) for f in frames}
    for kind, entries, parts in SOCKET_CALLS:
        if names & entries:
            for part, marks in parts:
                if names & marks:
                    return kind, part
            return kind, "other"
    return None


def read_profile(path):
    """Returns {group: (total, Counter(self frame), Counter(frame anywhere),
    Counter((read or write, part)))}."""
    totals = collections.Counter()
    selfs = collections.defaultdict(collections.Counter)
    inclusive = collections.defaultdict(collections.Counter)
    sockets = collections.defaultdict(collections.Counter)
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
            anywhere = set(frames[1:])
            for frame in anywhere:
                inclusive[group][frame] += n
            part = socket_part(anywhere)
            if part:
                sockets[group][part] += n
    return {g: (totals[g], selfs[g], inclusive[g], sockets[g]) for g in totals}


def is_rank(profile):
    """A rank process has a proxy thread; the perf tool's launcher has none."""
    return any(g.startswith("sparkccl-proxy-") for g in profile)


def merge(profiles):
    merged = {}
    for p in profiles:
        for g, (t, s, i, sock) in p.items():
            if g not in merged:
                merged[g] = [0] + [collections.Counter() for _ in range(3)]
            merged[g][0] += t
            merged[g][1].update(s)
            merged[g][2].update(i)
            merged[g][3].update(sock)
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
    grand = sum(p[0] for p in profile.values()) or 1
    match = re.compile(args.match)
    def has_kernel_frames(selfs):
        return any(f.endswith(KERNEL_SUFFIX) for f in selfs)

    if not any(has_kernel_frames(p[1]) for p in profile.values()):
        out.write("(no kernel frames: socket calls not split; see kernel.perf_event_paranoid)\n")
    for g, (total, selfs, inclusive, sockets) in groups:
        if total < args.min_share * grand:
            continue
        out.write(f"\n## {g}: {fmt(total).strip()} ({100.0 * total / grand:.1f}% of all samples)\n")
        out.write("self (top of stack):\n")
        for frame, n in selfs.most_common(args.top):
            out.write(f"  {fmt(n)}  {frame}\n")
        shown = [(f, n) for f, n in inclusive.most_common()
                 if match.search(f.removesuffix(KERNEL_SUFFIX))][: args.top]
        if shown:
            out.write(f"inclusive (frames matching {args.match}):\n")
            for frame, n in shown:
                out.write(f"  {fmt(n)}  {frame}\n")
        if has_kernel_frames(selfs):
            for kind, _, parts in SOCKET_CALLS:
                whole = sum(n for (k, _), n in sockets.items() if k == kind)
                if whole:
                    names = [p for p, _ in parts] + ["other"]
                    split = ", ".join(f"{p} {fmt(sockets[(kind, p)]).strip()}" for p in names)
                    out.write(f"socket {kind}s {fmt(whole).strip()}: {split}\n")


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
