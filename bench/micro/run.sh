#!/usr/bin/env bash
# Micro-measurements behind the analysis in docs/benchmarks.md (no peers: they explain where
# time goes, they compare SparkCCL with nothing).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
# perf/target/lib: the engine's jar with its runtime jars and a Log4j2 backend
ls perf/target/lib/sparkccl-native-engine-*.jar >/dev/null 2>&1 || mvn -B -q package -DskipTests -pl perf -am
CP="perf/target/lib/*"
java bench/micro/WakeUpCost.java
java bench/micro/TcpRoundTrip.java
# a spinning thread per rank: only rank counts the cores cover
for n in 2 4 8; do
  if [ "$n" -le "$(nproc)" ]; then java bench/micro/TcpDoublingFloor.java $n 5000 3; fi
done
# the ring allReduce's floor at 2 ranks, 2 MiB, with one and two threads a rank where the cores
# cover them (docs/benchmarks.md, "Two threads a rank...")
for lanes in 1 2; do
  if [ $((2 * lanes)) -le "$(nproc)" ]; then java bench/micro/TcpRingFloor.java 2 $lanes 2097152 200 3 50; fi
done
java -cp "$CP" bench/micro/ReduceSpeed.java | tail -1
java -cp "$CP" -Dlog4j2.configurationFile=bin/log4j2.xml bench/micro/AuthCost.java 2>/dev/null
for n in 2 4; do java -cp "$CP" -Dlog4j2.configurationFile=bin/log4j2.xml bench/micro/ThreadRanksLatency.java $n 2; done
java bench/micro/ShmPingPong.java 1 | tail -1
