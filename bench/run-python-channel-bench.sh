#!/usr/bin/env bash
# allReduce float32 from Python worker processes through the executor's channel against Java
# threads on the same engine, without Spark: PythonChannelBenchMain plays the executor of
# local[RANKS] (ranks as threads of one JVM, as Spark's local mode) and starts the workers as its
# children. Runs once with the call box (python.callBox=true) and once through the socket, same
# run, and prints the ratios docs/benchmarks.md quotes. The call box needs idle=auto to settle on
# spin (a core for every polling thread) or IDLE=spin. Needs Python 3 with numpy; builds the jars.
#   bench/run-python-channel-bench.sh [ROUNDS=3]     RANKS [4]  IDLE [auto]
set -euo pipefail
# UCX's memory hooks patch a JVM's mmap/munmap/madvise/brk in place (docs/reliability.md).
export UCX_MEM_EVENTS="${UCX_MEM_EVENTS:-no}"
# UCX's error-signal handlers take the JVM's own SIGSEGVs where Jucx's library fails to load.
export UCX_ERROR_SIGNALS="${UCX_ERROR_SIGNALS-}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rounds="${1:-3}"
mvn -o -q -B package -DskipTests -pl perf,spark-plugin -am >&2
cp="spark-plugin/target/classes:spark-plugin/target/test-classes:perf/target/lib/*"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
for box in true false; do
  echo "== python.callBox=$box, idle=${IDLE:-auto}, ${RANKS:-4} ranks"
  SPARKCCL_PYTHON_CALLBOX=$box SPARKCCL_IDLE="${IDLE:-auto}" java -Xmx2g \
    -Dlog4j2.configurationFile=bin/log4j2.xml -cp "$cp" \
    org.sparkccl.spark.worker.PythonChannelBenchMain "${RANKS:-4}" "$rounds" python3 \
    bench/python_channel_worker.py | grep -E "^round|^RESULT" | tee "$log"
  python3 bench/python_channel_summary.py "$log" "${RANKS:-4}"
done
