"""One Python worker of the Spark-free Python benchmark (PythonChannelBenchMain, which starts it):
forms the communicator of task attempt ATTEMPT through its parent's channel, times allReduces of
BYTES bytes (float32 sum, in place, on a shared array) and the channel's own round trip, and prints
``TIMES <median call us> <median round trip us>``.

    python3 bench/python_channel_worker.py ATTEMPT BYTES WARMUP ITERATIONS
"""

import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "python-shim"))

import python_timing  # noqa: E402  (beside this script)
from sparkccl import _channel, comm as _comm  # noqa: E402


def main():
    attempt, nbytes, warmup, iters = (int(a) for a in sys.argv[1:5])
    ch = _channel.get()
    c = _comm._open(ch, attempt, 0, 600.0)
    try:
        times, ping = python_timing.all_reduce_times(c, nbytes // 4, warmup, iters)
        print("TIMES %.3f %.3f boxed=%s" % (statistics.median(times), statistics.median(ping),
                                             ch.boxed), flush=True)
    finally:
        c.close()


if __name__ == "__main__":
    main()
