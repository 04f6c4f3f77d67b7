"""The timing loop of the Python benchmarks (bench/python_bench.py in Spark tasks,
bench/python_channel_worker.py without Spark): the channel's own round trip, then in-place
float32 allReduces of ``count`` elements on a shared array."""

import time

import sparkccl
from sparkccl import _channel


def all_reduce_times(comm, count, warmup, iterations):
    """Returns (microseconds per timed allReduce, microseconds per channel round trip)."""
    ch = _channel.get()  # a request the executor just answers
    ping = []
    for _ in range(200):
        t0 = time.perf_counter()
        ch.request(_channel.PING, b"", 10.0)
        ping.append((time.perf_counter() - t0) * 1e6)
    x = sparkccl.zeros(max(1, count), "float32")
    x[:] = 1.0
    times = []
    for i in range(warmup + iterations):
        t0 = time.perf_counter()
        comm.all_reduce(x)
        if i >= warmup:
            times.append((time.perf_counter() - t0) * 1e6)
    return times, ping
