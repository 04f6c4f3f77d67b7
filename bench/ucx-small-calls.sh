#!/usr/bin/env bash
# Many small collectives over UCX, the case that stalled and crashed on UCX 1.16: RUNS rounds of
# 4 rank processes (the perf tool) doing 10,000 8 B broadcasts, reduces and allReduces each, with
# the mismatch check on and the ring on UCX (shared-memory edges off). A run fails when a rank
# exits non-zero (134/139: a crash inside UCX), stalls past the engine's timeout, or prints a UCX
# assertion. UCX_LIB runs it on another UCX release (bin/ucx-from-pip); RANKS, CALLS and
# TIMEOUT_S (the engine's timeout) change the sizes. Exits 1 if any run failed.
#   bench/ucx-small-calls.sh [RUNS]                                  (default 10)
#   UCX_LIB="$(bin/ucx-from-pip)" bench/ucx-small-calls.sh 10        (UCX 1.16)
set -euo pipefail
# UCX's memory hooks patch a JVM's mmap/munmap/madvise/brk in place (docs/reliability.md).
export UCX_MEM_EVENTS="${UCX_MEM_EVENTS:-no}"
# UCX's error-signal handlers take the JVM's own SIGSEGVs where Jucx's library fails to load.
export UCX_ERROR_SIGNALS="${UCX_ERROR_SIGNALS-}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
RUNS="${1:-10}"
RANKS="${RANKS:-4}"
CALLS="${CALLS:-10000}"
TIMEOUT_S="${TIMEOUT_S:-30}"
if [[ -n "${UCX_LIB:-}" ]]; then
  export LD_LIBRARY_PATH="$UCX_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
export SPARKCCL_SHM=off SPARKCCL_CHECKCALLS=true SPARKCCL_TIMEOUT="${TIMEOUT_S}s"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failed=0
total=0
for ((i = 1; i <= RUNS; i++)); do
  for op in broadcast reduce allreduce; do
    total=$((total + 1))
    rc=0
    start=$(date +%s%N)
    bin/sparkccl-perf -n "$RANKS" -t ucx -o "$op" -b 8 -e 8 -i "$CALLS" -w 100 --jit-warmup 0 \
      --timeout $((TIMEOUT_S * 3)) >"$tmp/run.log" 2>&1 || rc=$?
    ms=$((($(date +%s%N) - start) / 1000000))
    asserts=$(grep -c -E 'Assertion|SIGSEGV|hs_err' "$tmp/run.log" || true)
    echo "run $i $op: exit $rc, $ms ms, $asserts UCX assertion line(s)"
    if [[ $rc -ne 0 || $asserts -ne 0 ]]; then
      failed=$((failed + 1))
      grep -E 'Assertion|SIGSEGV|exited with|still running|Exception' "$tmp/run.log" | head -5 || true
    fi
  done
done
release="this machine's UCX"
[[ -n "${UCX_LIB:-}" ]] && release="the UCX in $UCX_LIB"
echo "ucx small calls on $release: $total runs of $CALLS calls at $RANKS ranks, $failed failed"
[[ $failed -eq 0 ]]
