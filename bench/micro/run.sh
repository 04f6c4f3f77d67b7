#!/usr/bin/env bash
# Micro-measurements behind the analysis in docs/benchmarks.md (no peers: they explain where
# time goes, they compare SparkCCL with nothing).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
ls native-engine/target/sparkccl-native-engine-*.jar >/dev/null 2>&1 || mvn -B -q package -DskipTests -pl native-engine -am
CP="$(ls native-engine/target/sparkccl-native-engine-*.jar | head -1):native-engine/target/lib/*"
java bench/micro/WakeUpCost.java
java bench/micro/TcpRoundTrip.java
java -cp "$CP" bench/micro/ReduceSpeed.java | tail -1
for n in 2 4; do java -cp "$CP" -Dlog4j2.configurationFile=bin/log4j2.xml bench/micro/ThreadRanksLatency.java $n 2; done
