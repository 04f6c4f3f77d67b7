#!/usr/bin/env bash
# AllReduceJob (SparkCCL allReduce against Spark's treeReduce, same job, same data) on a local
# cluster of executor JVMs and on local[4], alternating, RUNS times each; prints every RESULT
# line and the median speedup per master.
#   bench/run-spark-bench.sh [RUNS=3] [ELEMENTS=16777216]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
runs="${1:-3}"
elements="${2:-16777216}"
masters=('local-cluster[2,2,2048]' 'local[4]')
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
for ((i = 1; i <= runs; i++)); do
  for m in "${masters[@]}"; do
    line="$(bin/sparkccl-example allreduce --master "$m" --partitions 4 --elements "$elements" 2>/dev/null | grep '^RESULT' || echo 'RESULT failed')"
    echo "master=$m run=$i $line" | tee -a "$out"
  done
done
rm -rf "$(bin/spark-home)/work"
python3 - "$out" <<'PY'
import re, statistics, sys
by = {}
for line in open(sys.argv[1]):
    m = re.search(r"master=(\S+) .*correct=(\w+) sparkccl_ms=([\d.]+) treereduce_ms=([\d.]+) speedup=([\d.]+)", line)
    if m:
        by.setdefault(m.group(1), []).append((m.group(2), float(m.group(3)), float(m.group(4)), float(m.group(5))))
for master, rows in by.items():
    print("%-26s runs=%d correct=%s median sparkccl_ms=%.0f treereduce_ms=%.0f speedup=%.2f"
          % (master, len(rows), all(r[0] == "true" for r in rows),
             statistics.median(r[1] for r in rows), statistics.median(r[2] for r in rows),
             statistics.median(r[3] for r in rows)))
PY
