#!/usr/bin/env bash
# allReduce over UCX on two UCX releases in the same run: this machine's and the one in UCX_LIB
# (default: UCX 1.16 from pip, bin/ucx-from-pip), ROUNDS rounds alternating between them, 4 rank
# processes, the ring on UCX (shared-memory edges off), 8 B to 256 KiB. Prints each size's median
# time in us over the rounds for both releases and their ratio (second over first).
#   bench/ucx-releases.sh [ROUNDS]      (default 3)
set -euo pipefail
# UCX's memory hooks patch a JVM's mmap/munmap/madvise/brk in place (docs/reliability.md).
export UCX_MEM_EVENTS="${UCX_MEM_EVENTS:-no}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROUNDS="${1:-3}"
SECOND="${UCX_LIB:-$(bin/ucx-from-pip)}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
export SPARKCCL_SHM=off
for ((r = 1; r <= ROUNDS; r++)); do
  for which in first second; do
    lib=""
    [[ $which == second ]] && lib="$SECOND"
    LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" bin/sparkccl-perf -n "${RANKS:-4}" \
      -t ucx -b 8 -e 256K -f 8 -i "${ITERS:-2000}" -w 200 --json "$tmp/$which-$r.json" >/dev/null
  done
done
python3 - "$tmp" "$ROUNDS" "$SECOND" <<'PY'
import json, statistics, sys
tmp, rounds, second = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def rows(which):
    by_size = {}
    for r in range(1, rounds + 1):
        data = json.load(open(f"{tmp}/{which}-{r}.json"))
        for row in data["rows"]:
            by_size.setdefault(row["size"], []).append(row["time_us"])
    return {s: statistics.median(t) for s, t in by_size.items()}
a, b = rows("first"), rows("second")
print(f"# allReduce float32 over UCX, medians of {rounds} rounds, us: this machine's UCX, then {second}")
print("| size | this machine's UCX | second release | second / first |")
print("|---:|---:|---:|---:|")
for s in sorted(a):
    print(f"| {s} | {a[s]:.1f} | {b[s]:.1f} | {b[s] / a[s]:.2f} |")
PY
