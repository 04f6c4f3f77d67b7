#!/usr/bin/env bash
# The full correctness matrix: every algorithm (ring, tree, recursive doubling, recursive halving)
# x protocol (shared-memory edges by LL and by the simple protocol, socket edges) x transport
# (sockets, sockets with the ring's bytes on the proxy thread, UCX, in memory) at 1 to 9 ranks,
# every dtype and op, placements alternating, counts from 0 to 70,001 elements, each rank's result
# against the reference and bit-identical across ranks. The test run (bin/run-tests) takes the same
# setups with one dtype per count.
#   bench/run-matrix.sh
set -euo pipefail
# UCX's memory hooks patch a JVM's mmap/munmap/madvise/brk in place (docs/reliability.md).
export UCX_MEM_EVENTS="${UCX_MEM_EVENTS:-no}"
# UCX's error-signal handlers take the JVM's own SIGSEGVs where Jucx's library fails to load.
export UCX_ERROR_SIGNALS="${UCX_ERROR_SIGNALS-}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mvn -o -q -B test-compile -pl native-engine
mvn -o -B surefire:test -pl native-engine -Dtest=CollectiveMatrixTest -Dsparkccl.matrix=full \
  | grep -E 'Tests run:|FAIL|\[ERROR\]'
