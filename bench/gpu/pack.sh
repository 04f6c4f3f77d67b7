#!/usr/bin/env bash
# Packs what bench/gpu/run.sh needs on the GPU machine, which has no Java, into DEST (default
# .device-cuda in the repository root; ignore it through .git/info/exclude): a jlinked Java 17
# runtime, the perf tool's jar with its runtime jars (the engine's and JCuda's natives among them),
# the engine's test classes (the GPU suite reuses the CPU suite's cases and reference) with JUnit's
# API jars, and these scripts. Then copy DEST to the GPU machine and run there:  bash DEST/run.sh DEST
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DEST="$(realpath -m "${1:-$ROOT/.device-cuda}")"
cd "$ROOT"
mvn -o -q -B package -DskipTests -pl perf,spark-plugin -am
mkdir -p "$DEST/lib" "$DEST/test-classes"
# jdk.jfr: a run there can be profiled (JAVA_TOOL_OPTIONS=-XX:StartFlightRecording=...), 2 MB;
# jdk.net: the TCP floor's split-delack layout (TCP_QUICKACK)
if [ ! -x "$DEST/jre/bin/java" ]; then
  jlink --add-modules java.base,java.logging,java.management,java.naming,java.xml,jdk.jfr,jdk.net,jdk.unsupported \
        --strip-debug --no-header-files --no-man-pages --compress=2 --output "$DEST/jre"
fi
rm -f "$DEST"/lib/*.jar
cp perf/target/sparkccl-perf-*.jar perf/target/lib/*.jar "$DEST/lib/"
rm -f "$DEST"/lib/*-tests.jar "$DEST"/lib/*-sources.jar
# Keep the bundle small (under 64 MiB) for copying: only JCuda's driver-API natives (the
# NvPTXCompiler, NVRTC and runtime libraries, 25 MB, are never loaded by the engine).
natives=$(ls "$DEST"/lib/jcuda-natives-*.jar)
zip -q -d "$natives" 'lib/libJNvPTXCompiler-*' 'lib/libJNvrtc-*' 'lib/libJCudaRuntime-*'
# log4j-core needs java.desktop (java.beans), 10 MB more runtime: log through log4j-api's
# simple logger instead (run.sh sets its level)
rm -f "$DEST"/lib/log4j-core-*.jar
M2="${M2_REPO:-$HOME/.m2/repository}"
for jar in org/junit/jupiter/junit-jupiter-api/5.14.4/junit-jupiter-api-5.14.4.jar \
           org/junit/jupiter/junit-jupiter-params/5.14.4/junit-jupiter-params-5.14.4.jar \
           org/opentest4j/opentest4j/1.3.0/opentest4j-1.3.0.jar \
           org/junit/platform/junit-platform-commons/1.14.4/junit-platform-commons-1.14.4.jar; do
  [ -f "$M2/$jar" ] && cp "$M2/$jar" "$DEST/lib/"
done
rm -rf "$DEST/test-classes" && cp -r native-engine/target/test-classes "$DEST/test-classes"
cp bench/gpu/run.sh "$DEST/run.sh"
cp bench/gpu/compare.sh bench/gpu/nccl_allreduce.py "$DEST/"
cp bench/ab_summary.py "$DEST/ab_summary.py"
# the CPU profiler (run.sh DEST profile PERF_OPTIONS...): bench/profile.sh, its summary and the
# profiler's library
mkdir -p "$DEST/bench" "$DEST/profiler"
cp "$(bash bench/profile.sh --lib)" "$DEST/profiler/"
cp bench/profile.sh bench/profile_summary.py "$DEST/bench/"
# where threads wait (run.sh DEST waits PERF_OPTIONS...): flight recordings, summarised by the
# perf jar's WaitProfile
cp bench/waits.sh bench/waits.jfc "$DEST/bench/"
# each thread's CPU mid-run (run.sh DEST threads PERF_OPTIONS...)
cp bench/thread-cpu.sh "$DEST/bench/"
# the latency benchmark (run.sh DIR latency): its scripts, OpenMPI's program (compiled there with
# mpicc) and the Jucx ping-pong compiled here (the jlinked runtime has no compiler)
mkdir -p "$DEST/bench/micro" "$DEST/micro-classes"
cp bench/run-latency-bench.sh bench/common.sh bench/mpi_coll.c bench/latency_table.py \
   bench/plot_bench.py "$DEST/bench/"
# what the mismatch check costs (run.sh DIR checkcost)
cp bench/run-checkcalls-bench.sh bench/ab_summary.py "$DEST/bench/"
# the settings mode's summary (it imports ab_summary.py from its own folder)
cp bench/settings_summary.py "$DEST/bench/"
# with the host reductions' speed (run.sh DIR reduce)
javac -nowarn -cp "perf/target/lib/*" -d "$DEST/micro-classes" bench/micro/JucxPutPingPong.java \
  bench/micro/TcpDoublingFloor.java bench/micro/TcpRingFloor.java bench/micro/ReduceTypes.java \
  bench/micro/ReduceBlocks.java
# the Python benchmark without Spark (run.sh DEST python): the executor's channel for Python
# workers (the plugin's worker package, which needs no Spark), the bench's main, the shim's package
# (without its bundled jars) and the worker script
rm -rf "$DEST/plugin-classes" "$DEST/python-shim" && mkdir -p "$DEST/plugin-classes/org/sparkccl/spark" "$DEST/python-shim"
cp -r spark-plugin/target/classes/org/sparkccl/spark/worker "$DEST/plugin-classes/org/sparkccl/spark/"
cp spark-plugin/target/test-classes/org/sparkccl/spark/worker/PythonChannelBenchMain*.class \
   "$DEST/plugin-classes/org/sparkccl/spark/worker/"
(cd python-shim && tar cf - --exclude=jars --exclude=__pycache__ sparkccl) | tar xf - -C "$DEST/python-shim"
cp bench/python_channel_worker.py bench/python_channel_summary.py bench/python_timing.py "$DEST/bench/"
# Builds revision $1's module $2 (with what it needs) in a temporary worktree and puts its jar in
# $3, with its runtime jars where $4 is "all".
pack_revision() {
  local rev="$1" module="$2" into="$3" what="$4" tmp
  tmp="$(mktemp -d)"
  git worktree add -q --detach "$tmp/src" "$rev"
  # revisions from before the perf module kept the perf tool in the engine
  [ "$module" = perf ] && [ ! -f "$tmp/src/perf/pom.xml" ] && module=native-engine
  (cd "$tmp/src" && mvn -o -q -B package -DskipTests -pl "$module" -am)
  rm -rf "$into" && mkdir -p "$into"
  cp "$tmp/src/$module"/target/sparkccl-*.jar "$into/"
  [ "$what" = all ] && cp "$tmp/src/$module"/target/lib/*.jar "$into/"
  rm -f "$into"/*-tests.jar "$into"/*-sources.jar
  git worktree remove --force "$tmp/src"
  rm -rf "$tmp"
}
# BASELINE=<rev>: also pack that revision's perf tool into DEST/baseline-lib, for `run.sh DEST ab`
# (the same-run comparison of two revisions on the GPU machine's cores, host memory) and `run.sh
# DEST gpu-ab` (the same on the GPUs; JCuda's natives then come from DEST/lib).
if [ -n "${BASELINE:-}" ]; then
  pack_revision "$BASELINE" perf "$DEST/baseline-lib" all
  # host memory only: no JCuda natives; log4j-api's simple logger as above
  rm -f "$DEST"/baseline-lib/jcuda-natives-*.jar "$DEST"/baseline-lib/log4j-core-*.jar
fi
# ENGINES="NAME=<rev> ...": each revision's engine jar alone in DEST/NAME, to go first on this
# bundle's class path (`run.sh DEST settings` with JARS=NAME in a setting)
for engine in ${ENGINES:-}; do
  pack_revision "${engine#*=}" native-engine "$DEST/${engine%%=*}" engine
done
du -sh "$DEST"
