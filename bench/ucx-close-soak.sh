#!/usr/bin/env bash
# Repeats the engine test's abort scenario over UCX in fresh JVMs and counts how they ended: 3 ranks
# as threads, 2 channels, ib.qpsPerConnection=4, rank 1 aborts a 16 MiB allReduce, 10 rounds per JVM
# (FreeAfterFailureMain, also run by ProcessAllReduceTest). A JVM that exits 134 crashed inside UCX
# while closing. Prints one line per run and a summary; JVM_OPTS adds JVM options, QPS changes the
# endpoint count.
#   bench/ucx-close-soak.sh [RUNS]      (default 120; about 2.5 s a run on a 2-core VM)
set -euo pipefail
# UCX's memory hooks patch a JVM's mmap/munmap/madvise/brk in place (docs/reliability.md).
export UCX_MEM_EVENTS="${UCX_MEM_EVENTS:-no}"
# UCX's error-signal handlers take the JVM's own SIGSEGVs where Jucx's library fails to load.
export UCX_ERROR_SIGNALS="${UCX_ERROR_SIGNALS-}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RUNS="${1:-120}"
nice -n 10 mvn -o -q -B test-compile -pl native-engine
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mvn -o -q -B dependency:build-classpath -pl native-engine -Dmdep.outputFile="$tmp/cp" >/dev/null
cp="native-engine/target/test-classes:native-engine/target/classes:$(cat "$tmp/cp")"
crashed=0
failed=0
warned=0
for i in $(seq 1 "$RUNS"); do
  rc=0
  # shellcheck disable=SC2086
  timeout 300 java -XX:MaxDirectMemorySize=512m ${JVM_OPTS:-} -Dsparkccl.transport=ucx \
    -Dsparkccl.ib.qpsPerConnection="${QPS:-4}" -XX:ErrorFile="$tmp/hs_err_%p.log" -cp "$cp" \
    org.sparkccl.FreeAfterFailureMain >"$tmp/run.log" 2>&1 || rc=$?
  warns=$(grep -c 'did not answer at close' "$tmp/run.log" || true)
  echo "run $i: exit $rc, $warns close warning(s)"
  if [[ $rc -eq 134 || $rc -eq 139 ]]; then
    crashed=$((crashed + 1))
    grep -m1 -E 'Assertion|SIGSEGV' "$tmp/run.log" || true
  elif [[ $rc -ne 0 ]]; then
    failed=$((failed + 1))
    tail -5 "$tmp/run.log"
  fi
  [[ $warns -gt 0 ]] && warned=$((warned + 1))
done
echo "ucx close soak: $RUNS runs, $crashed crashed (exit 134/139), $failed failed otherwise," \
  "$warned with a close warning"
