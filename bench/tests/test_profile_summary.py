"""Tests of bench/profile_summary.py: the split of socket system calls by what the kernel did."""
import io
import os
import random
import re
import sys
import tempfile
import unittest
from contextlib import redirect_stdout

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import profile_summary  # noqa: E402

CALLER = "org/sparkccl/comm/ChannelTask.run;org/sparkccl/transport/socket/PlainWire.read"
JDK_READ = ";".join(["sun/nio/ch/IOUtil.read", "sun/nio/ch/SocketDispatcher.read",
                     "sun/nio/ch/SocketDispatcher.read0"])
JDK_WRITE = ";".join(["sun/nio/ch/IOUtil.write", "sun/nio/ch/SocketDispatcher.writev",
                      "sun/nio/ch/FileDispatcherImpl.writev0"])
READ_ENTRY = "__GI_read;entry_SYSCALL_64_after_hwframe_[k];ksys_read_[k];sock_recvmsg_[k]"
WRITE_ENTRY = "writev;entry_SYSCALL_64_after_hwframe_[k];vfs_writev_[k];tcp_sendmsg_locked_[k]"

# (kind, part, kernel frames under the call's entry) of each socket stack the profiles hold
SOCKET_STACKS = [
    ("read", "data copy", "tcp_recvmsg_locked_[k];skb_copy_datagram_iter_[k];_copy_to_iter_[k]"),
    ("read", "backlog", "release_sock_[k];__release_sock_[k];tcp_v4_do_rcv_[k]"),
    ("read", "acks sent", "tcp_recvmsg_locked_[k];__tcp_cleanup_rbuf_[k];__tcp_transmit_skb_[k]"),
    ("read", "other", "release_sock_[k];_raw_spin_unlock_bh_[k]"),
    ("write", "data copy", "_copy_from_iter_[k]"),
    ("write", "delivery to a local socket", "tcp_write_xmit_[k];do_softirq_[k];net_rx_action_[k]"),
    ("write", "other", "tcp_write_xmit_[k];ip_finish_output2_[k]"),
]


def write_profiles(directory, counts, kernel=True):
    """Two rank processes' profiles with counts[i] samples of SOCKET_STACKS[i] on the calling
    thread of each, plus stacks that are no socket's: a proxy thread's spin, a compiler thread's
    file read through libc, and a launcher process without any engine thread."""
    for pid in (101, 102):
        with open(os.path.join(directory, f"{pid}.collapsed"), "w") as f:
            f.write(f"[sparkccl-proxy-r{pid} tid={pid}1];org/sparkccl/proxy/ProxyThread.loop 7\n")
            file_read = "__GI_read;ksys_read_[k];_copy_to_iter_[k]" if kernel else "__GI_read"
            f.write(f"[C2 CompilerThread0 tid=9];{file_read} 13\n")
            for (kind, _, frames), n in zip(SOCKET_STACKS, counts):
                jdk, entry = (JDK_READ, READ_ENTRY) if kind == "read" else (JDK_WRITE, WRITE_ENTRY)
                if not kernel:
                    frames, entry = "", entry.split(";")[0]
                stack = ";".join(x for x in (f"[main tid={pid}]", CALLER, jdk, entry, frames) if x)
                f.write(f"{stack} {n}\n")
    with open(os.path.join(directory, "100.collapsed"), "w") as f:
        f.write("[main tid=1];org/sparkccl/perf/PerfTool.main;__GI_read;ksys_read_[k] 50\n")


def summary(directory, *options):
    out = io.StringIO()
    with redirect_stdout(out):
        profile_summary.main([directory, *options])
    return out.getvalue()


def socket_lines(text):
    """{(group, read or write): (total, {part: figure})} from the printed summary."""
    found, group = {}, None
    for line in text.splitlines():
        if line.startswith("## "):
            group = line[3:].split(":")[0]
        m = re.match(r"socket (read|write)s ([\d.]+): (.*)$", line)
        if m:
            parts = dict(re.match(r"(.*) ([\d.]+)$", p).groups() for p in m.group(3).split(", "))
            figures = {k: float(v) for k, v in parts.items()}
            found[(group, m.group(1))] = (float(m.group(2)), figures)
    return found


class SocketSplitTest(unittest.TestCase):
    def test_reads_and_writes_split_by_kernel_frames_per_call_of_one_rank(self):
        rng = random.Random(20261207)
        counts = [rng.randint(5, 400) for _ in SOCKET_STACKS]
        calls, interval = rng.randint(100, 5000), rng.choice([50.0, 100.0, 200.0])
        with tempfile.TemporaryDirectory() as d:
            write_profiles(d, counts)
            found = socket_lines(summary(d, "--calls", str(calls), "--interval-us", str(interval)))
        # two rank processes with the same stacks: one rank's share is each file's count
        scale = interval / calls
        self.assertEqual(set(found), {("main", "read"), ("main", "write")}, "only sockets' calls")
        for kind in ("read", "write"):
            total, parts = found[("main", kind)]
            expected = {p: n * scale for (k, p, _), n in zip(SOCKET_STACKS, counts) if k == kind}
            self.assertEqual(set(parts), set(expected), kind)
            for part, value in expected.items():
                self.assertAlmostEqual(parts[part], value, delta=0.0015, msg=f"{kind}: {part}")
            self.assertAlmostEqual(total, sum(expected.values()), delta=0.0015, msg=kind)

    def test_without_kernel_frames_nothing_is_split_and_the_summary_says_why(self):
        with tempfile.TemporaryDirectory() as d:
            rng = random.Random(3)
            write_profiles(d, [rng.randint(5, 50) for _ in SOCKET_STACKS], kernel=False)
            text = summary(d, "--calls", "1000")
        self.assertEqual(socket_lines(text), {})
        self.assertIn("no kernel frames", text)

    def test_match_sees_kernel_frames_without_their_mark(self):
        rng = random.Random(5)
        counts = [rng.randint(5, 50) for _ in SOCKET_STACKS]
        with tempfile.TemporaryDirectory() as d:
            write_profiles(d, counts)
            text = summary(d, "--calls", "100", "--match", "^_copy_to_iter$")
        inclusive, group, listing = {}, None, False
        for line in text.splitlines():
            if line.startswith("## "):
                group = line[3:].split(":")[0]
            listing = line.startswith("inclusive") or (listing and line.startswith("  "))
            if listing and line.startswith("  "):
                inclusive[group] = line.split()
        # the calling thread's socket copies (the read stacks that copy), the compiler thread's file
        # read (13 samples a process) in its own group; 100 us samples over 100 calls: 1 us each
        self.assertEqual(inclusive["main"], [f"{counts[0]:.3f}", "_copy_to_iter_[k]"], text)
        self.assertEqual(inclusive["CN CompilerThreadN"], ["13.000", "_copy_to_iter_[k]"], text)

if __name__ == "__main__":
    unittest.main()
