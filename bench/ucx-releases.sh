#!/usr/bin/env bash
# allReduce over UCX on two UCX releases in the same run: this machine's ("old") and the one in
# UCX_LIB ("new"; default: UCX 1.16 from pip, bin/ucx-from-pip), ROUNDS rounds alternating which
# goes first, 4 rank processes, the ring on UCX (shared-memory edges off), 8 B to 256 KiB. Prints
# each size's median time over the rounds for both and their ratio, then every round's times
# (bench/ab_summary.py, as bench/perf-ab.sh does for two builds).
#   bench/ucx-releases.sh [ROUNDS]      (default 3)
set -euo pipefail
# UCX's memory hooks patch a JVM's mmap/munmap/madvise/brk in place (docs/reliability.md).
export UCX_MEM_EVENTS="${UCX_MEM_EVENTS:-no}"
# UCX's error-signal handlers take the JVM's own SIGSEGVs where Jucx's library fails to load.
export UCX_ERROR_SIGNALS="${UCX_ERROR_SIGNALS-}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROUNDS="${1:-3}"
SECOND="${UCX_LIB:-$(bin/ucx-from-pip)}"
RESULTS="$(mktemp)"
trap 'rm -f "$RESULTS"' EXIT
export SPARKCCL_SHM=off

run() { # label library-folder (empty: the machine's)
  local path="${LD_LIBRARY_PATH:-}"
  [[ -z $2 ]] || path="$2${path:+:$path}"
  LD_LIBRARY_PATH="$path" bin/sparkccl-perf -n "${RANKS:-4}" \
    -t ucx -b 8 -e 256K -f 8 -i "${ITERS:-2000}" -w 200 |
    awk -v label="$1" '$1 ~ /^[0-9]+$/ && NF >= 9 { print label, $1, $6 }' >>"$RESULTS"
}

for ((r = 1; r <= ROUNDS; r++)); do
  # whichever runs second in a pair can find the machine warmer or busier
  if ((r % 2)); then
    run old ""
    run new "$SECOND"
  else
    run new "$SECOND"
    run old ""
  fi
done
python3 bench/ab_summary.py "$RESULTS" "this machine's UCX" "the UCX in $SECOND" \
  "allReduce float32 over UCX, ${RANKS:-4} ranks"
