"""allReduce float32 from Python barrier tasks (sparkccl.run, shared arrays) beside the Java
in-task communicator, in the same local[4] application; see bench/run-python-bench.sh."""

import glob
import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python-shim"))
os.environ["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "python-shim"),
                                           os.path.join(ROOT, "bench")])

import sparkccl  # noqa: E402
from pyspark.sql import SparkSession  # noqa: E402

RANKS = 4
# (bytes, warm-up calls, timed calls)
SIZES = [(8, 50, 500), (64 << 20, 2, 10)]


def python_times(comm, count, warmup, iterations):
    import python_timing  # on the tasks' PYTHONPATH, above

    return python_timing.all_reduce_times(comm, count, warmup, iterations)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    jars = sorted(glob.glob(os.path.join(ROOT, "examples", "target", "lib", "*.jar")))
    jars += glob.glob(os.path.join(ROOT, "examples", "target", "sparkccl-examples-*[0-9T].jar"))
    spark = (SparkSession.builder.master("local[%d]" % RANKS).appName("sparkccl-python-bench")
             .config("spark.jars", ",".join(jars))
             .config("spark.plugins", "org.sparkccl.spark.SparkCCLPlugin")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
             .config("spark.driver.memory", "4g")
             .getOrCreate())
    sc = spark.sparkContext
    java = sc._jvm.org.sparkccl.examples.InTaskAllReduceTimes
    results = {}
    for r in range(rounds):  # alternate, so both see the same machine
        for nbytes, warmup, iters in SIZES:
            count = nbytes // 4
            py, ping = sparkccl.run(python_times, RANKS, count, warmup, iters)
            results.setdefault(("channel_ping", 0), []).append(statistics.median(ping))
            jv = list(java.run(sc._jsc, RANKS, count, warmup, iters))
            for name, times in (("python", py), ("java", jv)):
                results.setdefault((name, nbytes), []).append(statistics.median(times))
            print("round %d %d B: python median %.1f us, java median %.1f us, channel round trip"
                  " %.1f us" % (r, nbytes, statistics.median(py), statistics.median(jv),
                                statistics.median(ping)), flush=True)
    spark.stop()
    out = {}
    for (name, nbytes), medians in results.items():
        t = statistics.median(medians)
        busbw = nbytes / (t / 1e6) * 2 * (RANKS - 1) / RANKS / 1e9 if nbytes else 0.0
        out["%s_%d" % (name, nbytes)] = {"median_us": t, "busbw_GBps": busbw,
                                         "round_medians_us": medians}
    print("RESULT " + json.dumps(out))


if __name__ == "__main__":
    main()
