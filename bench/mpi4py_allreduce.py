"""The Python peer: mpi4py's Allreduce (float32 sum, in place) over OpenMPI, the same sizes and
call counts as bench/python_bench.py; rank 0 prints a RESULT line."""

import json
import statistics
import sys
import time

import numpy as np
from mpi4py import MPI

SIZES = [(8, 50, 500), (64 << 20, 2, 10)]


def main():
    comm = MPI.COMM_WORLD
    out = {}
    for nbytes, warmup, iters in SIZES:
        x = np.ones(nbytes // 4, np.float32)
        times = []
        comm.Barrier()
        for i in range(warmup + iters):  # back to back, as the SparkCCL loops
            t0 = time.perf_counter()
            comm.Allreduce(MPI.IN_PLACE, x, op=MPI.SUM)
            if i >= warmup:
                times.append((time.perf_counter() - t0) * 1e6)
        t = statistics.median(times)
        n = comm.Get_size()
        out["mpi4py_%d" % nbytes] = {"median_us": t,
                                     "busbw_GBps": nbytes / (t / 1e6) * 2 * (n - 1) / n / 1e9}
    if comm.Get_rank() == 0:
        print("RESULT " + json.dumps(out))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
