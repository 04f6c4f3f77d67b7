"""The ratios of the Spark-free Python benchmark (PythonChannelBenchMain's RESULT line), as
docs/benchmarks.md quotes them:  python3 bench/python_channel_summary.py LOG RANKS"""

import json
import sys

r = [json.loads(line[7:]) for line in open(sys.argv[1]) if line.startswith("RESULT ")][-1]
n, big = int(sys.argv[2]), 64 << 20


def busbw(key):
    return big / (r[key]["median_us"] / 1e6) * 2 * (n - 1) / n / 1e9


py, java = r["python_8"]["median_us"], r["java_8"]["median_us"]
print("summary: 8 B python %.1f us, java %.1f us, python/java %.2fx (target <= 1.5); channel round"
      " trip %.1f us; 64 MiB busbw python %.2f, java %.2f GB/s, %.2fx (target >= 0.9)"
      % (py, java, py / java, r["channel_ping_0"]["median_us"], busbw("python_%d" % big),
         busbw("java_%d" % big), busbw("python_%d" % big) / busbw("java_%d" % big)))
