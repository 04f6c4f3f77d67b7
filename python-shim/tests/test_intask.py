"""sparkccl.communicator() inside real PySpark barrier tasks (local[4,2]), sparkccl.run, errors,
worker death, the local channel's authentication and leaks; one case on local-cluster.

Run: python3 -m unittest discover -s python-shim/tests  (bin/run-tests does, after mvn verify).
"""

import collections
import glob
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHIM = os.path.join(ROOT, "python-shim")
sys.path.insert(0, SHIM)
# The workers import the shim, and this module too (the task functions below refer to its helpers)
HERE = os.path.dirname(os.path.abspath(__file__))
os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in (SHIM, HERE, os.environ.get("PYTHONPATH")) if p)

import numpy as np  # noqa: E402

import sparkccl  # noqa: E402

N = 4
DTYPES = ("float32", "float64", "int32", "int64", "float16")
JARS = sorted(glob.glob(os.path.join(ROOT, "examples", "target", "lib", "*.jar")))
HAVE_JARS = any(os.path.basename(j).startswith("sparkccl-") for j in JARS)


def _session(master, **conf):
    from pyspark.sql import SparkSession

    b = (SparkSession.builder.master(master).appName("sparkccl-intask-test")
         .config("spark.jars", ",".join(JARS))
         .config("spark.plugins", "org.sparkccl.spark.SparkCCLPlugin")
         .config("spark.ui.enabled", "false")
         .config("spark.ui.showConsoleProgress", "false")
         .config("spark.ccl.timeout", "20s"))
    for k, v in conf.items():
        b = b.config(k, v)
    return b.getOrCreate()


def _inputs(rank, dtype, n, seed):
    """Rank ``rank``'s random input: never zero, small enough that int sums and float16 fit."""
    rng = np.random.default_rng([seed, rank])
    if dtype.startswith("int"):
        return rng.integers(1, 50, size=n).astype(dtype)
    return rng.uniform(0.5, 1.5, size=n).astype(dtype)


def _check_all_collectives(comm, seed):
    """Every collective on every dtype, shared and plain arrays, against numpy; returns failures."""
    bad = []
    size, rank = comm.size, comm.rank
    for di, dtype in enumerate(DTYPES):
        n = 1000 + 8 * di  # a multiple of the ranks, for reduce_scatter
        all_in = [_inputs(r, dtype, n, seed + di) for r in range(size)]
        wide = [a.astype(np.float64) for a in all_in]
        rtol = 1e-2 if dtype == "float16" else 1e-5 if dtype == "float32" else 1e-12
        for shared in (True, False):
            def arr():
                a = all_in[rank].copy()
                return sparkccl.asarray(a) if shared else a
            ops = ("sum", "max", "min") + (("avg", "prod") if dtype.startswith("float") else ())
            for op in ops:
                a = arr()
                comm.all_reduce(a, op=op)
                ref = {"sum": np.sum, "max": np.max, "min": np.min, "prod": np.prod,
                       "avg": np.mean}[op](np.stack(wide), axis=0)
                if op == "prod" and dtype == "float16":
                    ref = np.prod(np.stack(wide[:size]), axis=0)
                if not np.allclose(a.astype(np.float64), ref, rtol=rtol * size, atol=0):
                    bad.append("all_reduce %s %s shared=%s" % (op, dtype, shared))
            root = (seed + di) % size
            a = arr()
            comm.broadcast(a, root=root)
            if not np.array_equal(a, all_in[root]):
                bad.append("broadcast %s shared=%s" % (dtype, shared))
            out = sparkccl.empty((size, n), dtype) if shared else None
            got = comm.all_gather(arr(), out)
            if not np.array_equal(got.reshape(size, n), np.stack(all_in)):
                bad.append("all_gather %s shared=%s" % (dtype, shared))
            block = n // size
            out = sparkccl.empty(block, dtype) if shared else np.empty(block, dtype)
            comm.reduce_scatter(arr(), out, op="sum")
            ref = np.sum(np.stack(wide), axis=0)[rank * block:(rank + 1) * block]
            if not np.allclose(out.astype(np.float64), ref, rtol=rtol * size, atol=0):
                bad.append("reduce_scatter %s shared=%s" % (dtype, shared))
    # bfloat16 as uint16 bit patterns (ml_dtypes absent): the top half of a float32
    vals = [np.random.default_rng([seed, 7, r]).uniform(0.5, 1.5, 64).astype(np.float32)
            for r in range(size)]
    bits = [(v.view(np.uint32) >> 16).astype(np.uint16) for v in vals]
    a = bits[rank].copy()
    comm.all_reduce(a, dtype="bfloat16")
    got = (a.astype(np.uint32) << 16).view(np.float32)
    ref = sum((b.astype(np.uint32) << 16).view(np.float32).astype(np.float64) for b in bits)
    if not np.allclose(got, ref, rtol=2e-2 * size):
        bad.append("all_reduce bfloat16")
    comm.barrier()
    return bad


@unittest.skipUnless(HAVE_JARS, "SKIPPED: build the jars first (mvn package): none in"
                                " examples/target/lib")
class InTaskTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # local[4,2]: a task may fail once, as on a cluster, so a failed barrier stage is retried
        # (once: two attempts at most, to keep the failing cases short)
        cls.spark = _session("local[%d,2]" % N, **{"spark.stage.maxConsecutiveAttempts": "2"})
        cls.sc = cls.spark.sparkContext
        cls.jvm_pid = int(cls.sc._jvm.java.lang.ProcessHandle.current().pid())

    @classmethod
    def tearDownClass(cls):
        cls.spark.stop()

    def _barrier(self, fn):
        return self.sc.parallelize(range(N), N).barrier().mapPartitions(fn).collect()

    def test_every_collective_and_dtype_matches_numpy_from_map_partitions(self):
        def task(_):
            with sparkccl.communicator() as comm:
                yield comm.rank, comm.size, _check_all_collectives(comm, 11)
        out = sorted(self._barrier(task))
        self.assertEqual([(r, N, []) for r in range(N)], out)

    def test_every_collective_and_dtype_matches_numpy_from_map_in_pandas(self):
        try:
            import pandas as pd  # noqa: F401
            import pyarrow  # noqa: F401
        except ImportError as e:
            self.skipTest("SKIPPED: mapInPandas needs pandas and pyarrow: %s" % e)

        def task(frames):
            import pandas as pd
            rows = sum(len(f) for f in frames)
            with sparkccl.communicator() as comm:
                bad = _check_all_collectives(comm, 23)
                yield pd.DataFrame({"rank": [comm.rank], "rows": [rows], "bad": [";".join(bad)]})
        df = self.spark.range(0, 400, numPartitions=N)
        out = df.mapInPandas(task, "rank long, rows long, bad string", barrier=True).collect()
        self.assertEqual([(r, 100, "") for r in range(N)],
                         sorted((x["rank"], x["rows"], x["bad"]) for x in out))

    def test_a_training_loop_of_500_all_reduces_matches_a_numpy_simulation(self):
        steps, n, lr = 500, 10_000, 0.01
        targets = [np.random.default_rng([99, r]).uniform(0.5, 1.5, n) for r in range(N)]

        def train(comm, steps, n, lr):
            target = np.random.default_rng([99, comm.rank]).uniform(0.5, 1.5, n)
            w = np.zeros(n)
            grad = sparkccl.zeros(n, "float64")
            for _ in range(steps):
                grad[:] = w - target  # the gradient of |w - target|^2 / 2 on this rank's data
                comm.all_reduce(grad, op="avg")
                w -= lr * grad
            return w

        got = sparkccl.run(train, N, steps, n, lr)
        w = np.zeros(n)
        for _ in range(steps):
            w -= lr * (w - np.mean(targets, axis=0))
        np.testing.assert_allclose(got, w, rtol=1e-9)

    def test_repeated_calls_on_shared_arrays_follow_every_change_of_their_arguments(self):
        # a repeated call reuses its request (Communicator._last); a new op, root, array or
        # writability must not
        def task(_):
            with sparkccl.communicator() as comm:
                r = comm.rank
                a = sparkccl.zeros(64, "float32")
                b = sparkccl.zeros(64, "float32")
                got = []
                for step in range(3):
                    a[:] = r + 1 + step
                    comm.all_reduce(a)
                    got.append(float(a[-1]))
                a[:] = r + 1
                comm.all_reduce(a, op="max")
                got.append(float(a[-1]))
                for root in (1, 2, 2):
                    a[:] = r + 10
                    comm.broadcast(a, root=root)
                    got.append(float(a[-1]))
                for arr in (b, a, b):
                    arr[:] = r + 1
                    comm.all_reduce(arr)
                    got.append(float(arr[-1]))
                b.flags.writeable = False
                try:
                    comm.all_reduce(b)
                    got.append("no error")
                except sparkccl.CclArgumentError:
                    got.append("read-only refused")
                yield r, got
        want = [10.0, 14.0, 18.0, 4.0, 11.0, 12.0, 12.0, 10.0, 10.0, 10.0, "read-only refused"]
        self.assertEqual([(r, want) for r in range(N)], sorted(self._barrier(task)))

    def test_a_mismatch_raises_ccl_error_in_every_task_and_at_the_driver(self):
        def task(_):
            with sparkccl.communicator(timeout=10) as comm:
                a = np.ones(10 if comm.rank == 0 else 20, np.float32)
                try:
                    comm.all_reduce(a)
                    yield comm.rank, "no error"
                except sparkccl.CclError as e:
                    yield comm.rank, type(e).__name__ + ": " + str(e)
        out = sorted(self._barrier(task))
        self.assertEqual(list(range(N)), [r for r, _ in out])
        for r, err in out:  # who saw it names it; the others were aborted with its message
            self.assertRegex(err, r"^Ccl(Mismatch|Abort)Error: .*called allReduce\(count=(10|20),",
                             "rank %d: %s" % (r, err))
        self.assertTrue(any(e.startswith("CclMismatchError") for _, e in out), out)

        def mismatched(comm):
            comm.all_reduce(np.ones(10 + comm.rank, np.float64))
        with self.assertRaises(sparkccl.CclError) as caught:
            sparkccl.run(mismatched, N, timeout=10)
        self.assertRegex(str(caught.exception).splitlines()[0], r"^Ccl\w*Error in a barrier task: ")

        # the user's own barrier job: inside ccl_errors() its failure is the task's CclError
        def uncaught(_):
            with sparkccl.communicator(timeout=10) as comm:
                comm.all_reduce(np.ones(10 + comm.rank, np.float32))
                yield comm.rank
        rdd = self.spark.sparkContext.parallelize(range(N), N)
        with self.assertRaises(sparkccl.CclError) as caught:
            with sparkccl.ccl_errors():
                rdd.barrier().mapPartitions(uncaught).collect()
        first = str(caught.exception).splitlines()[0]
        self.assertRegex(first, r"^Ccl(Mismatch|Abort)Error in a barrier task: .*allReduce")
        self.assertIsNotNone(caught.exception.job_error)
        # anything else passes through as it was
        with self.assertRaises(ZeroDivisionError):
            with sparkccl.ccl_errors():
                1 / 0

    def test_bad_arguments_raise_ccl_argument_error_before_anything_is_sent(self):
        def task(_):
            with sparkccl.communicator() as comm:
                errors = []
                for call in (lambda: comm.all_reduce([1.0, 2.0]),
                             lambda: comm.all_reduce(np.ones(3, np.int16)),
                             lambda: comm.all_reduce(np.ones(3), op="mean"),
                             lambda: comm.broadcast(np.ones(3), root=N),
                             lambda: comm.all_gather(np.ones(3), np.ones(5))):
                    try:
                        call()
                        errors.append("no error")
                    except sparkccl.CclArgumentError as e:
                        errors.append(str(e))
                comm.barrier()
                yield errors
        for errors in self._barrier(task):
            self.assertRegex(errors[0], "expected a numpy array")
            self.assertRegex(errors[1], "int16 are not supported")
            self.assertRegex(errors[2], "op='mean' is not a reduction")
            self.assertRegex(errors[3], "root=4 is not a rank")
            self.assertRegex(errors[4], "out holds 5 elements")

    def test_run_fails_at_once_without_enough_slots_and_outside_barrier_tasks(self):
        t0 = time.monotonic()
        with self.assertRaisesRegex(sparkccl.CclArgumentError, "needs 5 task slots at once but"
                                                                " master local\\[4,2\\] offers 4"):
            sparkccl.run(lambda comm: 0, N + 1)
        self.assertLess(time.monotonic() - t0, 5)

        def plain(_):
            try:
                sparkccl.communicator()
                yield "no error"
            except sparkccl.CclArgumentError as e:
                yield str(e)
        out = self.sc.parallelize(range(1), 1).mapPartitions(plain).collect()
        self.assertRegex(out[0], r"is not a running barrier task of this executor: call"
                                 r" sparkccl.communicator\(\) inside rdd.barrier\(\)")

    def test_a_killed_worker_fails_its_peers_in_time_and_the_retry_succeeds(self):
        record = tempfile.mkdtemp(prefix="sparkccl-kill-")
        try:
            def fn(comm, record):
                x, attempt = _all_reduce_until_rank_1_is_killed(comm, record, 1 << 18, 100_000)
                return float(x[0]), attempt

            t0 = time.monotonic()
            value, attempt = sparkccl.run(fn, N, record, timeout=10)
            self.assertEqual((float(N), 1), (value, attempt))
            self.assertLess(time.monotonic() - t0, 90)
            for name in set(os.listdir(record)) - {"killed"}:  # peers that recorded their error
                with open(os.path.join(record, name)) as f:
                    seconds, kind = f.read().split()
                self.assertLess(float(seconds), 10 + 5, name)
                self.assertIn(kind, ("CclAbortError", "CclTimeoutError", "CclError"), name)
            # the executor serves the next job
            self.assertEqual(N * 2.0, sparkccl.run(
                lambda comm: float(comm.all_reduce(np.full(3, 2.0))[0]), N))
        finally:
            shutil.rmtree(record, ignore_errors=True)

    def _channel_files(self):
        d = "/tmp/sparkccl-%d/%d" % (os.getuid(), self.jvm_pid)
        return os.path.join(d, "channel.sock"), os.path.join(d, "secret")

    def test_the_channel_refuses_a_client_without_the_secret(self):
        from sparkccl import _channel
        sock_path, secret_path = self._channel_files()
        self.assertEqual(0o600, os.stat(secret_path).st_mode & 0o777)
        self.assertEqual(0o700, os.stat(os.path.dirname(secret_path)).st_mode & 0o777)
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(10)
        s.connect(sock_path)
        s.sendall(_channel.MAGIC + struct.pack(">q", os.getpid()) + os.urandom(32))
        reply = b""
        while len(reply) < 64:
            reply += s.recv(64 - len(reply))
        s.sendall(os.urandom(32))  # a proof made without the secret
        self.assertEqual(b"\x00", s.recv(1))
        self.assertEqual(b"", s.recv(1))  # and the executor hangs up
        s.close()
        with open(secret_path) as f:  # with the secret, the same handshake is accepted
            ch = _channel.Channel(sock_path, bytes.fromhex(f.read()))
        self.assertEqual(b"", bytes(ch.request(_channel.PING, b"", 10)))
        ch.close()

    def test_another_user_cannot_read_the_secret_or_reach_the_socket(self):
        if os.getuid() != 0 or shutil.which("useradd") is None:
            self.skipTest("SKIPPED: needs root and useradd to make a second user")
        python = "/usr/bin/python3"  # one the other user may run (not a per-user install)
        if not os.access(python, os.X_OK):
            self.skipTest("SKIPPED: no %s for the second user to run" % python)
        user = "sparkccltest"
        subprocess.run(["useradd", "--no-create-home", user], capture_output=True)
        sock_path, secret_path = self._channel_files()
        probe = ("import socket\nfor f in (lambda: open(%r).read(), lambda: socket.socket("
                 "socket.AF_UNIX).connect(%r)):\n  try:\n    f(); print('allowed')\n"
                 "  except PermissionError:\n    print('refused')\n") % (secret_path, sock_path)
        out = subprocess.run(["runuser", "-u", user, "--", python, "-c", probe], cwd="/",
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(["refused", "refused"], out.stdout.split(), out.stderr)

    def test_no_segments_fds_or_threads_leak_over_200_communicators(self):
        def shm():
            return sorted(f for f in os.listdir("/dev/shm") if f.startswith("sparkccl-"))

        def jvm_counts():
            return (len(os.listdir("/proc/%d/fd" % self.jvm_pid)),
                    len(os.listdir("/proc/%d/task" % self.jvm_pid)))

        def jvm_thread_names():
            names = collections.Counter()
            for tid in os.listdir("/proc/%d/task" % self.jvm_pid):
                try:
                    with open("/proc/%d/task/%s/comm" % (self.jvm_pid, tid)) as f:
                        names[f.read().strip()] += 1
                except OSError:
                    pass  # the thread ended meanwhile
            return names

        def task(_):
            fds = None
            for i in range(200):
                with sparkccl.communicator() as comm:
                    x = sparkccl.asarray(np.full(64, comm.rank + 1.0))
                    comm.all_reduce(x)
                    assert x[0] == N * (N + 1) / 2
                    del x
                if i == 9:
                    fds = len(os.listdir("/proc/self/fd"))
            yield fds, len(os.listdir("/proc/self/fd"))
        self._barrier(task)  # warm up: threads and fds that stay for the executor's life
        time.sleep(1)
        fds0, threads0 = jvm_counts()
        names0 = jvm_thread_names()
        ccl0 = _sparkccl_threads(names0)
        # the executor's channel for Python workers runs for its life: the names are visible
        self.assertGreaterEqual(ccl0, 1, "no sparkccl-* thread among %s" % dict(names0))
        for before, after in self._barrier(task):
            self.assertLessEqual(after, before, "the Python worker's fds grew")
        # communicators close their threads as they end; on a loaded 2-core machine the last
        # ones may take some seconds to exit, so wait (at most 15 s) for the counts to settle
        deadline = time.monotonic() + 15
        while True:
            time.sleep(1)
            fds1, threads1 = jvm_counts()
            names1 = jvm_thread_names()
            ccl1 = _sparkccl_threads(names1)
            if ((fds1 <= fds0 + 16 and ccl1 <= ccl0 + 8 and threads1 <= threads0 + 64)
                    or time.monotonic() > deadline):
                break
        self.assertEqual([], shm())
        self.assertLessEqual(fds1, fds0 + 16, "the executor's fds grew")
        # SparkCCL's own threads (sparkccl-*) must come back; Spark's pools (block manager, process
        # reapers, task launch workers) come and go by tens on a loaded machine, and a leak per
        # communicator would add 200 or more
        grew = dict(names1 - names0)
        self.assertLessEqual(ccl1, ccl0 + 8, "SparkCCL's threads grew; new (by name): %s" % grew)
        self.assertLessEqual(threads1, threads0 + 64,
                             "the executor's threads grew; new (by name): %s" % grew)


@unittest.skipUnless(HAVE_JARS, "SKIPPED: build the jars first (mvn package): none in"
                                " examples/target/lib")
class CallBoxTest(unittest.TestCase):
    """Workers whose communicators spin (idle=spin here; idle=auto where the host has the cores)
    send their requests through the call box both processes poll, not the socket."""

    @classmethod
    def setUpClass(cls):
        cls.spark = _session("local[2,2]", **{"spark.ccl.idle": "spin",
                                              "spark.stage.maxConsecutiveAttempts": "2"})
        cls.sc = cls.spark.sparkContext

    @classmethod
    def tearDownClass(cls):
        cls.spark.stop()

    def _barrier(self, fn):
        return self.sc.parallelize(range(2), 2).barrier().mapPartitions(fn).collect()

    def test_collectives_sleeps_and_large_calls_through_the_box_match_numpy(self):
        def task(_):
            from sparkccl import _channel
            with sparkccl.communicator() as comm:
                boxed = _channel.get().boxed
                bad = _check_all_collectives(comm, 31)
                x = sparkccl.zeros(1 << 20, "float32")  # long enough that the caller sleeps
                for pause in (0.0, 0.03, 0.0):  # 30 ms: the session sleeps on the socket
                    time.sleep(pause)
                    x[:] = comm.rank + 1.5
                    comm.all_reduce(x)
                    if not np.all(x == 1.5 + 2.5):
                        bad.append("all_reduce after a %.2f s pause" % pause)
                yield comm.rank, boxed, bad
        self.assertEqual([(0, True, []), (1, True, [])], sorted(self._barrier(task)))

    def test_a_mismatch_through_the_box_raises_in_every_task(self):
        def task(_):
            with sparkccl.communicator(timeout=10) as comm:
                a = sparkccl.zeros(16, "float32")
                try:
                    comm.all_reduce(a, op="max" if comm.rank else "sum")
                    comm.barrier()
                    yield "no error"
                except sparkccl.CclError as e:
                    yield type(e).__name__
        out = self._barrier(task)
        self.assertTrue(set(out) <= {"CclMismatchError", "CclAbortError"}, out)
        self.assertIn("CclMismatchError", out)  # who saw it names it; the other was aborted

    def test_a_worker_killed_amid_boxed_calls_fails_its_peer_in_time(self):
        # the killed worker's session polls its box, then sleeps on the socket and sees it close
        record = tempfile.mkdtemp(prefix="sparkccl-box-kill-")
        try:
            def fn(comm, record):
                from sparkccl import _channel
                _, attempt = _all_reduce_until_rank_1_is_killed(comm, record, 1024, 10_000_000)
                return _channel.get().boxed, attempt

            boxed, attempt = sparkccl.run(fn, 2, record, timeout=10)
            self.assertEqual((True, 1), (boxed, attempt))
            errors = set(os.listdir(record)) - {"killed"}
            self.assertEqual({"0-0"}, errors)  # rank 0 of the first attempt recorded its error
            with open(os.path.join(record, "0-0")) as f:
                seconds, kind = f.read().split()
            self.assertLess(float(seconds), 10 + 5)
            self.assertIn(kind, ("CclAbortError", "CclTimeoutError", "CclError"))
        finally:
            shutil.rmtree(record, ignore_errors=True)


def _all_reduce_until_rank_1_is_killed(comm, record, count, calls):
    """In a task of ``sparkccl.run``: on the first attempt rank 1 kills its own worker after 0.5 s
    while every rank all-reduces a shared array of ``count`` ones up to ``calls`` times; a rank
    whose call fails writes "<seconds> <error type>" to ``record``/"<attempt>-<rank>" and raises.
    On the retry (the marker file exists) one call. Returns (the array, the attempt)."""
    import threading
    attempt = 1 if os.path.exists(os.path.join(record, "killed")) else 0
    comm.barrier()  # every rank has read the marker before rank 1 writes it
    x = sparkccl.zeros(count, "float32")
    if attempt == 0 and comm.rank == 1:
        open(os.path.join(record, "killed"), "w").close()
        threading.Timer(0.5, os.kill, (os.getpid(), 9)).start()
    t0 = time.monotonic()
    try:
        for _ in range(calls):
            x[:] = 1.0
            comm.all_reduce(x)
            if attempt > 0:
                break
    except sparkccl.CclError as e:
        with open(os.path.join(record, "%d-%d" % (attempt, comm.rank)), "w") as f:
            f.write("%.3f %s" % (time.monotonic() - t0, type(e).__name__))
        raise
    return x, attempt


def _sparkccl_threads(names):
    """How many of the threads named in ``names`` (a Counter) are SparkCCL's own."""
    return sum(n for name, n in names.items() if name.startswith("sparkccl-"))


@unittest.skipUnless(HAVE_JARS and os.environ.get("SPARK_HOME"),
                     "SKIPPED: local-cluster needs the jars and SPARK_HOME (bin/run-tests sets it)")
class LocalClusterTest(unittest.TestCase):
    def test_run_on_two_executor_jvms_without_the_python_daemon(self):
        # separate executor JVMs, and workers started by the JVM itself (no PySpark daemon):
        # each worker still finds its own executor's channel
        # Spark gives a fresh worker 10 s to connect back; on a loaded 2-core machine four
        # starting at once can miss it, and the stage's retries ride that out
        spark = _session("local-cluster[2,2,1024]", **{"spark.python.use.daemon": "false",
                                                       "spark.stage.maxConsecutiveAttempts": "4"})
        try:
            def fn(comm):
                x = sparkccl.zeros(1000, "float64")
                x[:] = comm.rank + 1
                comm.all_reduce(x)
                return float(x.sum()), os.getppid()
            total, _ = sparkccl.run(fn, 4)
            self.assertEqual(1000 * (1 + 2 + 3 + 4), total)
        finally:
            spark.stop()


if __name__ == "__main__":
    unittest.main()
