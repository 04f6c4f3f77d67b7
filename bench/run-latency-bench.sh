#!/usr/bin/env bash
# Latency benchmark: allReduce (or OP) float32 sum from 8 B to 16 MiB, SparkCCL (socket and ucx
# transports, algo auto and rd; transport auto, which passes everything through shared memory between
# ranks of one host) beside OpenMPI (shared memory, and TCP with
# --mca btl tcp,self --mca pml ob1) at 4 and 8 rank processes on this machine, all in one run; a
# Jucx put ping-pong between two processes gives the floor under the ucx transport, and recursive
# doubling between bare Java threads over busy-polled loopback TCP the floor under the socket
# transport (bench/micro/TcpDoublingFloor.java, at each power-of-two rank count, with one socket
# per pair and with one socket each way). Every setup
# runs REPEATS times, interleaved so that the machine's load falls on all of them alike; the table
# gives medians. Writes bench/build/latency/: one JSON per run (the perf tool's --json; OpenMPI's
# rows converted), summary.json, table.md and the plots latency-n4.png, latency-n8.png.
#
# It runs from a checkout (bin/sparkccl-perf, java) and from the bundle bench/gpu/pack.sh makes for
# machines without Java (bench/gpu/run.sh DIR latency sets SPARKCCL_PERF and JAVA_CMD).
#
# Environment overrides (defaults in brackets):
#   RANKS_LIST ["4 8"]  REPEATS [3]  MIN [8]  MAX [16M]  FACTOR [8]  WARMUP [10]  ITERS [50]
#   TIMED_MS [100]: time each size for about this many milliseconds where ITERS calls would take
#   less (the perf tool's --timed-ms, mpi_coll's -T: both count from their warm-up's rate), so that
#   a small size's mean is not carried by the few calls the machine delays (a mean of 30 calls at
#   64 KiB came out 2-4x apart from pass to pass); 0 times ITERS calls alone, as before 2026-12-05
#   JIT_WARMUP [20000]: untimed calls before the first size, so that SparkCCL's small-call path
#   runs compiled by C2 as in a long training loop (500 measured the JIT: 3x the time at 8 B)
#   IDLE [auto]: SPARKCCL_IDLE for every SparkCCL rank (auto spins when the cores allow it)
#   OP [allreduce]: broadcast, reduce, allgather or reducescatter instead (root 0)
#   SETUPS ["socket-auto socket-rd ucx-auto ucx-rd mpi-shm mpi-tcp"]; TRANSPORT-ALGO for SparkCCL
#   (transport socket, ucx or auto; algo auto, ring, tree, rd or rh), mpi-shm or mpi-tcp
#   FLOOR [1]: 0 skips the Jucx put ping-pong and the TCP floor
#   RUN_TIMEOUT [900]: seconds one setup's run may take (its rank processes too); a run past it
#   is logged as FAILED and the others go on
#   OUT [bench/build/latency]  SPARKCCL_PERF [bin/sparkccl-perf]  JAVA_CMD [java -cp perf/target/lib/*]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=bench/common.sh
source bench/common.sh

RANKS_LIST="${RANKS_LIST:-4 8}"
REPEATS="${REPEATS:-3}"
MIN="${MIN:-8}"
MAX="${MAX:-16M}"
FACTOR="${FACTOR:-8}"
WARMUP="${WARMUP:-10}"
ITERS="${ITERS:-50}"
TIMED_MS="${TIMED_MS:-100}"
JIT_WARMUP="${JIT_WARMUP:-20000}"
IDLE="${IDLE:-auto}"
SETUPS="${SETUPS:-socket-auto socket-rd ucx-auto ucx-rd mpi-shm mpi-tcp}"
OP="${OP:-allreduce}"
FLOOR="${FLOOR:-1}"
RUN_TIMEOUT="${RUN_TIMEOUT:-900}"
OUT="${OUT:-$BUILD/latency}"
read -r -a PERF <<<"${SPARKCCL_PERF:-bin/sparkccl-perf}"
read -r -a JAVA_CMD <<<"${JAVA_CMD:-java -cp perf/target/lib/*}"

ensure_deps
build_mpi_coll
mkdir -p "$OUT"
rm -f "$OUT"/run-*.json "$OUT"/*.err "$OUT"/floor.txt "$OUT"/floor-tcp.txt

run_setup() { # setup ranks pass
  local setup=$1 n=$2 pass=$3 file="$OUT/run-$1-n$2-p$3"
  local sizes=(-b "$MIN" -e "$MAX" -f "$FACTOR" -w "$WARMUP" -i "$ITERS")
  case "$setup" in
    socket-* | ucx-* | auto-*)
      local cmd=("${PERF[@]}" --device host -n "$n" -t "${setup%-*}" -a "${setup#*-}" -o "$OP" -d float32 -r sum
        "${sizes[@]}" --timed-ms "$TIMED_MS" -c 1 --jit-warmup "$JIT_WARMUP" --timeout "$RUN_TIMEOUT" --json "$file.json")
      log "pass $pass: SPARKCCL_IDLE=$IDLE $(quote "${cmd[@]}")"
      SPARKCCL_IDLE="$IDLE" timeout "$RUN_TIMEOUT" "${cmd[@]}" >"$file.txt" 2>"$file.err" ||
        log "FAILED: see $file.err"
      ;;
    mpi-shm | mpi-tcp)
      local cmd=("${MPIRUN[@]}")
      [[ $setup == mpi-tcp ]] && cmd+=("${MPI_TCP_ARGS[@]}")
      cmd+=(-np "$n" "$MPI_BIN" -o "$OP" -d float32 "${sizes[@]}" -T "$TIMED_MS" -a 0)
      log "pass $pass: $(quote "${cmd[@]}")"
      timeout "$RUN_TIMEOUT" "${cmd[@]}" >"$file.txt" 2>"$file.err" || log "FAILED: see $file.err"
      python3 bench/latency_table.py --mpi-json "$file.txt" "$n" "$setup" "$OP" >"$file.json"
      ;;
    *) log "unknown setup $setup"; exit 2 ;;
  esac
}

if [[ $FLOOR == 1 ]]; then
  port=$((20000 + RANDOM % 20000))
  micro=bench/micro/JucxPutPingPong.java
  [[ -n ${MICRO_CLASSES:-} ]] && micro=JucxPutPingPong # precompiled (the GPU bundle)
  log "floor: $(quote "${JAVA_CMD[@]}") $micro 0|1 $port"
  timeout 120 "${JAVA_CMD[@]}" "$micro" 1 "$port" 2>"$OUT/floor1.err" &
  floor_pid=$!
  timeout 120 "${JAVA_CMD[@]}" "$micro" 0 "$port" 2>"$OUT/floor0.err" | tee "$OUT/floor.txt" >&2 || log "floor FAILED: see $OUT/floor0.err"
  wait "$floor_pid" || true
  # the floor under the socket transport: recursive doubling of 8 B over busy-polled loopback
  # TCP between bare Java threads, at each power-of-two rank count of the run, with one socket per
  # pair of ranks (OpenMPI's layout, and SparkCCL's point-to-point links) and with one socket each
  # way (SparkCCL's ring connections)
  tcp=bench/micro/TcpDoublingFloor.java
  [[ -n ${MICRO_CLASSES:-} ]] && tcp=TcpDoublingFloor
  cores=$(nproc)
  for n in $RANKS_LIST; do
    if (( n > cores )); then
      log "TCP floor at $n ranks skipped: it spins a thread per rank and this machine has $cores cores"
    elif (( n >= 2 && (n & (n - 1)) == 0 )); then
      for layout in shared split; do
        log "floor: $(quote "${JAVA_CMD[@]}") $tcp $n 20000 5 8 $layout"
        timeout 120 "${JAVA_CMD[@]}" "$tcp" "$n" 20000 5 8 "$layout" 2>>"$OUT/floor-tcp.err" |
          tee -a "$OUT/floor-tcp.txt" >&2 || log "TCP floor FAILED: see $OUT/floor-tcp.err"
      done
    fi
  done
fi

for pass in $(seq 1 "$REPEATS"); do
  for n in $RANKS_LIST; do
    for setup in $SETUPS; do
      run_setup "$setup" "$n" "$pass"
    done
  done
done

UCX_VERSION="$(dpkg-query -W -f='${Version}' libucx0 2>/dev/null || echo unknown)"
python3 bench/latency_table.py "$OUT" \
  "Date: $(date -u '+%Y-%m-%d %H:%M UTC')" \
  "Machine: $(uname -srm), $(nproc) cores; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)" \
  "SparkCCL: idle=$IDLE, defaults otherwise; UCX: libucx0 $UCX_VERSION, Jucx 1.12.1, UCX_TLS=${UCX_TLS:-unset}" \
  "OpenMPI: $(mpirun --version 2>&1 | head -1)" \
  "Operation: $OP float32" \
  "Command: bench/run-latency-bench.sh (OP=$OP RANKS_LIST='$RANKS_LIST' REPEATS=$REPEATS MIN=$MIN MAX=$MAX FACTOR=$FACTOR WARMUP=$WARMUP ITERS=$ITERS TIMED_MS=$TIMED_MS JIT_WARMUP=$JIT_WARMUP IDLE=$IDLE)" \
  | tee "$OUT/table.md"
if python3 -c 'import matplotlib' 2>/dev/null; then
  python3 bench/plot_bench.py "$OUT/summary.json" "$OUT"
else
  log "no matplotlib here: plot elsewhere with python3 bench/plot_bench.py $OUT/summary.json DIR"
fi
