#!/usr/bin/env bash
# Full-size runs of the fault tests whose CI sizes are smaller: the soak of 1,000 communicators
# over sockets and 300 over UCX (CI: 300 over sockets); then how long 2 surviving rank processes of
# 3 take to fail after the third is killed with kill -9, over sockets and over UCX (timeout 20 s).
# Prints each run's summary. The fuzzer (10,000 frames), the two-host, relay and local-cluster
# tests already run at full size in bin/run-tests. SOAK=0 skips the soaks; KILL_RUNS (default 1)
# repeats the kill -9 runs, KILL_TIMEOUT (default 20s) is the engine's timeout there, TRANSPORTS
# (default "socket ucx") which transports they use (auto: the ring through shared memory, the
# ranks being on one host). A survivor that exits above 128 crashed.
#   bench/faults.sh
#   SOAK=0 KILL_RUNS=15 KILL_TIMEOUT=3s TRANSPORTS=ucx bench/faults.sh
#   SOAK=0 KILL_RUNS=5 KILL_TIMEOUT=3s TRANSPORTS=auto bench/faults.sh
set -euo pipefail
# UCX's memory hooks patch a JVM's mmap/munmap/madvise/brk in place (docs/reliability.md).
export UCX_MEM_EVENTS="${UCX_MEM_EVENTS:-no}"
# UCX's error-signal handlers take the JVM's own SIGSEGVs where Jucx's library fails to load.
export UCX_ERROR_SIGNALS="${UCX_ERROR_SIGNALS-}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
nice -n 10 mvn -o -q -B test-compile -pl native-engine
[ "${SOAK:-1}" = 0 ] || for run in "1000 socket" "300 ucx"; do
  set -- $run
  nice -n 10 mvn -o -B surefire:test -pl native-engine -Dtest=SoakTest \
    -Dsparkccl.soak.count="$1" -Dsparkccl.soak.transport="$2" 2>&1 \
    | grep -E '^SoakTest: [0-9]+ communicators \(|\[ERROR\]|Tests run:'
done

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mvn -o -q -B dependency:build-classpath -pl native-engine -Dmdep.outputFile="$tmp/cp" >/dev/null
cp="native-engine/target/test-classes:native-engine/target/classes:$(cat "$tmp/cp")"
rank() { # transport root rank
  exec java -Xmx256m -Dsparkccl.transport="$1" -Dsparkccl.timeout="${KILL_TIMEOUT:-20s}" -cp "$cp" \
    org.sparkccl.RankProcessMain "$2" "$3" 3 loop >"$tmp/r$3.log" 2>&1
}
for transport in ${TRANSPORTS:-socket ucx}; do
  for ((i = 1; i <= ${KILL_RUNS:-1}; i++)); do
    rm -f "$tmp"/r*.log
    rank "$transport" serve:127.0.0.1 0 &
    p0=$!
    until grep -q '^ROOT ' "$tmp/r0.log" 2>/dev/null; do sleep 0.1; done
    root="$(sed -n 's/^ROOT //p' "$tmp/r0.log")"
    rank "$transport" "$root" 1 &
    p1=$!
    rank "$transport" "$root" 2 &
    p2=$!
    until grep -q 'ITER 3' "$tmp/r0.log" && grep -q 'ITER 3' "$tmp/r2.log"; do sleep 0.1; done
    kill -9 "$p1"
    start=$(date +%s%N)
    for r in 0 2; do
      pid=$([ "$r" = 0 ] && echo "$p0" || echo "$p2")
      code=0
      wait "$pid" || code=$?
      echo "kill -9, $transport, run $i: rank $r exited $code" \
        "$(( ($(date +%s%N) - start) / 1000000 )) ms after:" \
        "$(grep -m1 FAILED "$tmp/r$r.log" | cut -c1-200)"
    done
    wait "$p1" 2>/dev/null || true
  done
done
