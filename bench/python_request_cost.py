"""The Python side of one collective, without the round trip: what Communicator.all_reduce costs on
a shared array before its request reaches the executor. The channel is replaced by one that answers
at once, so only the shim's own work is timed. Run: python3 bench/python_request_cost.py
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "python-shim"))

import numpy as np  # noqa: E402

from sparkccl import buffers, comm  # noqa: E402


class AnsweringChannel:
    """Stands in for the executor's channel: every request succeeds at once."""

    def request(self, kind, body, timeout_s):
        return memoryview(b"")


def main():
    ch = AnsweringChannel()
    c = comm.Communicator(ch, 1, 0, 4, 30.0)
    x = np.zeros(2, np.float32)
    # registered as a shared segment of this channel, as sparkccl.zeros would
    buffers._segments[7] = (x.__array_interface__["data"][0], 64, ch)
    for _ in range(3):
        n = 100_000
        t0 = time.perf_counter()
        for _ in range(n):
            c.all_reduce(x)
        print("python-side per all_reduce call: %.2f us" % ((time.perf_counter() - t0) / n * 1e6))


if __name__ == "__main__":
    main()
