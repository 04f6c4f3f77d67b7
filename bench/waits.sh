#!/usr/bin/env bash
# Runs bin/sparkccl-perf with a flight recording of waits in every JVM (the launcher and each rank
# process): every park and every contended monitor entry, with its stack (bench/waits.jfc). Then
# prints where each kind of thread waited: how many waits, how long, at which engine code
# (org.sparkccl.perf.WaitProfile). A CPU profile (bench/profile.sh) does not show a thread that
# sleeps; the time of a small collective is mostly hand-offs between threads.
#
#   bench/waits.sh OUT_DIR PERF_OPTIONS...
#   SPARKCCL_SHM=off WAIT_CALLS=30100 bench/waits.sh bench/build/waits -n 4 -t ucx -o reduce -b 8 -e 8 -c 0 -w 100 -i 20000 --jit-warmup 10000
#
# OUT_DIR gets one recording per JVM, perf.txt and summary.txt. WAIT_CALLS (every call a rank made:
# the perf tool's --jit-warmup, -w and -i) turns the figures into waits and microseconds a call of
# one rank. PERF (default bin/sparkccl-perf) is the command that runs the perf tool; SUMMARY
# (default: java with the perf module's class path) the one that runs WaitProfile. Recording every
# park slows a thread that parks often: compare runs recorded alike, not with unrecorded ones.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=bench/common.sh
source "$ROOT/bench/common.sh"
if [[ $# -lt 2 ]]; then
  sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
OUT_DIR="$(realpath -m "$1")"
shift
rm -rf "$OUT_DIR" && mkdir -p "$OUT_DIR"
# a directory as the file name: each JVM writes a recording of its own there
rec="-XX:StartFlightRecording=filename=$OUT_DIR/,settings=$ROOT/bench/waits.jfc -Xlog:jfr+startup=error"
perf_with_jvm_options "$OUT_DIR" "$rec" "$@"

if [[ -z "${SUMMARY:-}" ]]; then
  jar="$(ls "$ROOT"/perf/target/sparkccl-perf-*.jar | grep -v -e sources -e tests | head -1)"
  SUMMARY="java -cp $jar:$ROOT/perf/target/lib/*"
fi
read -r -a summary_cmd <<<"$SUMMARY"
calls=()
[[ -n "${WAIT_CALLS:-}" ]] && calls=(--calls "$WAIT_CALLS")
"${summary_cmd[@]}" org.sparkccl.perf.WaitProfile "$OUT_DIR" "${calls[@]}" | tee "$OUT_DIR/summary.txt"
