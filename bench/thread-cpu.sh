#!/usr/bin/env bash
# Runs bin/sparkccl-perf and, in the middle of the run, samples every thread's CPU with top -H
# (3 s): prints the perf tool's rows, the host's CPU shares (user, system, soft interrupts, idle)
# and, per thread name that top shows, the summed % of a core and how many threads, for threads
# above 3% of a core. It shows which threads of the ranks are busy and whether they fill the host.
#
#   bench/thread-cpu.sh OUT_DIR PERF_OPTIONS...
#   SPARKCCL_SHM=off bench/thread-cpu.sh bench/build/threads -n 4 -t socket -a ring -b 2M -e 2M -w 200 -i 9000 --jit-warmup 4000
#
# SAMPLE_AFTER (seconds, default 14) is when the sample starts: choose the perf options so that the
# run lasts longer than that plus 3 s. PERF (default bin/sparkccl-perf) is the command that runs
# the perf tool. OUT_DIR gets perf.txt, perf.err and top.txt.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ $# -lt 2 ]]; then
  sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
OUT_DIR="$(realpath -m "$1")"
shift
rm -rf "$OUT_DIR" && mkdir -p "$OUT_DIR"
read -r -a perf_cmd <<<"${PERF:-$ROOT/bin/sparkccl-perf}"
"${perf_cmd[@]}" "$@" >"$OUT_DIR/perf.txt" 2>"$OUT_DIR/perf.err" &
pid=$!
sleep "${SAMPLE_AFTER:-14}"
if ! kill -0 "$pid" 2>/dev/null; then
  echo "the perf run ended before the sample began: give it more calls (-i) or a smaller SAMPLE_AFTER" >&2
  wait "$pid" || true
  exit 1
fi
top -H -b -d 3 -n 2 -w 200 >"$OUT_DIR/top.txt"
status=0
wait "$pid" || status=$?
grep -E '^ +[0-9]' "$OUT_DIR/perf.txt" || true
# the second snapshot covers the 3 s between the two; the first counts from each thread's start
awk '/^top -/ {n++} n == 2 && /^%Cpu/' "$OUT_DIR/top.txt"
awk '/^top -/ {n++} n == 2 && $1 ~ /^[0-9]+$/ && $9 + 0 > 3 {c[$12] += $9; k[$12]++}
  END {for (x in c) printf "%8.1f %3d %s\n", c[x], k[x], x}' "$OUT_DIR/top.txt" | sort -nr
exit "$status"
