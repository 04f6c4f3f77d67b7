#!/usr/bin/env bash
# Runs bin/sparkccl-perf and, in the middle of the run, samples every thread's CPU with top -H
# (3 s): prints the perf tool's rows, the host's CPU shares (user, system, soft interrupts, idle)
# and, per thread name that top shows, the summed % of a core and how many threads, for threads
# above 3% of a core. It shows which threads of the ranks are busy and whether they fill the host.
# Then the context switches of the JVMs' threads over the same 3 s (from /proc): per thread name,
# how many threads and their summed voluntary (the thread blocked or parked) and involuntary
# (the scheduler took its core) switches a second, and the 12 threads that switched most: which
# threads wake often, and which lose their core.
#
#   bench/thread-cpu.sh OUT_DIR PERF_OPTIONS...
#   SPARKCCL_SHM=off bench/thread-cpu.sh bench/build/threads -n 4 -t socket -a ring -b 2M -e 2M -w 200 -i 9000 --jit-warmup 4000
#
# SAMPLE_AFTER (seconds, default 14) is when the sample starts: choose the perf options so that the
# run lasts longer than that plus 3 s. NICE_THREADS (a thread name's start, as /proc shows it, for
# example sparkccl-proxy-) lowers every such thread of the JVMs to nice 19, every 2 s until the
# sample begins: whether those threads' share of the cores is what the others miss. PERF (default
# bin/sparkccl-perf) is the command that runs the perf tool. OUT_DIR gets perf.txt, perf.err,
# top.txt, switches-before.txt and switches-after.txt (a line a thread: pid, tid, voluntary,
# involuntary switches, name) and switches.txt (the same a second over the sample).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [[ $# -lt 2 ]]; then
  sed -n '2,/^set -euo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
OUT_DIR="$(realpath -m "$1")"
shift
rm -rf "$OUT_DIR" && mkdir -p "$OUT_DIR"
read -r -a perf_cmd <<<"${PERF:-$ROOT/bin/sparkccl-perf}"
"${perf_cmd[@]}" "$@" >"$OUT_DIR/perf.txt" 2>"$OUT_DIR/perf.err" &
pid=$!
java_threads() { # a line a thread of every java process: pid, tid, its /proc folder
  local p t
  for p in $(pgrep -x java); do
    for t in /proc/"$p"/task/*; do
      echo "$p ${t##*/} $t"
    done
  done
}
switches() { # a line a thread of every java process: pid tid voluntary involuntary name
  java_threads | while read -r p tid t; do
    awk -v p="$p" -v t="$tid" -v name="$(cat "$t/comm" 2>/dev/null)" \
      '/^voluntary_ctxt_switches/ {v = $2} /^nonvoluntary_ctxt_switches/ {n = $2}
      END {if (v != "") print p, t, v, n, name}' "$t/status" 2>/dev/null || true
  done
}
if [[ -n "${NICE_THREADS:-}" ]]; then
  (
    for ((k = 0; k < ${SAMPLE_AFTER:-14} / 2; k++)); do
      sleep 2
      java_threads | while read -r p tid t; do
        if [[ "$(cat "$t/comm" 2>/dev/null)" == "$NICE_THREADS"* ]]; then
          renice -n 19 -p "$tid" >/dev/null 2>&1 || true
        fi
      done
    done
  ) &
fi
sleep "${SAMPLE_AFTER:-14}"
if ! kill -0 "$pid" 2>/dev/null; then
  echo "the perf run ended before the sample began: give it more calls (-i) or a smaller SAMPLE_AFTER" >&2
  wait "$pid" || true
  exit 1
fi
before=$(date +%s.%N)
switches >"$OUT_DIR/switches-before.txt"
top -H -b -d 3 -n 2 -w 200 >"$OUT_DIR/top.txt"
switches >"$OUT_DIR/switches-after.txt"
seconds=$(echo "$before $(date +%s.%N)" | awk '{print $2 - $1}')
status=0
wait "$pid" || status=$?
grep -E '^ +[0-9]' "$OUT_DIR/perf.txt" || true
# the second snapshot covers the 3 s between the two; the first counts from each thread's start
awk '/^top -/ {n++} n == 2 && /^%Cpu/' "$OUT_DIR/top.txt"
awk '/^top -/ {n++} n == 2 && $1 ~ /^[0-9]+$/ && $9 + 0 > 3 {c[$12] += $9; k[$12]++}
  END {for (x in c) printf "%8.1f %3d %s\n", c[x], k[x], x}' "$OUT_DIR/top.txt" | sort -nr
# context switches a second over the sample (top's 3 s and the reads around it, as timed), a
# line a thread that lived through it
awk -v s="$seconds" 'NR == FNR {v[$2] = $3; n[$2] = $4; next}
  ($2 in v) {name = $5; for (i = 6; i <= NF; i++) name = name " " $i
    printf "%s %s %.0f %.0f %s\n", $1, $2, ($3 - v[$2]) / s, ($4 - n[$2]) / s, name}' \
  "$OUT_DIR/switches-before.txt" "$OUT_DIR/switches-after.txt" >"$OUT_DIR/switches.txt"
echo "context switches a second, per thread name: voluntary, involuntary, threads, name"
awk '{name = $5; for (i = 6; i <= NF; i++) name = name " " $i
    k[name]++; v[name] += $3; n[name] += $4}
  END {for (x in k) printf "%10.0f %10.0f %4d %s\n", v[x], n[x], k[x], x}' \
  "$OUT_DIR/switches.txt" | sort -nr | head -20
echo "the 12 threads that switched most (a second): pid tid voluntary involuntary name"
sort -k3,3nr -k4,4nr "$OUT_DIR/switches.txt" | head -12
exit "$status"
