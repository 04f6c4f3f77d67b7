"""1,000 communicators from Python barrier tasks on local[4]: no shared-memory segments, file
descriptors or threads left behind (the CI test does 200). Prints the counts; exits 1 on a leak.
    PYTHONPATH=python-shim python3 bench/python_leak_check.py [COMMUNICATORS=1000]
"""

import glob
import os
import sys
import time

import numpy as np
from pyspark.sql import SparkSession

import sparkccl

N = 4


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    spark = (SparkSession.builder.master("local[%d]" % N).appName("sparkccl-leak-check")
             .config("spark.jars", ",".join(sorted(glob.glob("examples/target/lib/*.jar"))))
             .config("spark.plugins", "org.sparkccl.spark.SparkCCLPlugin")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .getOrCreate())
    sc = spark.sparkContext
    pid = int(sc._jvm.java.lang.ProcessHandle.current().pid())

    def jvm():
        return (len(os.listdir("/proc/%d/fd" % pid)), len(os.listdir("/proc/%d/task" % pid)))

    def task(n):
        def run(_):
            fds = []
            for i in range(n):
                with sparkccl.communicator() as comm:
                    x = sparkccl.asarray(np.full(64, comm.rank + 1.0))
                    comm.all_reduce(x)
                    assert x[0] == N * (N + 1) / 2, x[0]
                    del x
                if i in (9, n - 1):
                    fds.append(len(os.listdir("/proc/self/fd")))
            yield fds
        return run

    rdd = sc.parallelize(range(N), N).barrier()
    rdd.mapPartitions(task(10)).collect()  # warm-up: what stays for the executor's life
    time.sleep(1)
    before = jvm()
    t0 = time.time()
    worker = rdd.mapPartitions(task(count)).collect()
    seconds = time.time() - t0
    time.sleep(2)
    after = jvm()
    shm = [f for f in os.listdir("/dev/shm") if f.startswith("sparkccl-")]
    spark.stop()
    print("communicators=%d seconds=%.1f executor fds %d -> %d, threads %d -> %d; worker fds"
          " (after 10, after all) %s; /dev/shm segments left %d"
          % (count, seconds, before[0], after[0], before[1], after[1], worker, len(shm)))
    leak = (after[0] > before[0] + 8 or after[1] > before[1] + 4 or shm
            or any(w[1] > w[0] for w in worker))
    print("LEAK" if leak else "no leak")
    sys.exit(1 if leak else 0)


if __name__ == "__main__":
    main()
