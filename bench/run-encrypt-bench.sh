#!/usr/bin/env bash
# Cost of encryption on the socket transport: allReduce float32 sum with bin/sparkccl-perf -t socket,
# encrypt=false against encrypt=true (SPARKCCL_ENCRYPT), beside OpenMPI's MPI_Allreduce over TCP,
# all in one run on this machine. Points: 8 bytes (latency), 1 MiB and 64 MiB (bus bandwidth).
# Results land in bench/build/encrypt/ and a table in bench/build/encrypt.md.
#
# Environment overrides (defaults in brackets):
#   RANKS [4]  LAT_ITERS [500]  BW_ITERS [10]
#   REPEATS [3]: passes over every setup, interleaved so that the shared machine's load falls on
#                all of them alike; the table gives each setup's median
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=bench/common.sh
source bench/common.sh

RANKS="${RANKS:-4}"
LAT_ITERS="${LAT_ITERS:-500}"
BW_ITERS="${BW_ITERS:-10}"
REPEATS="${REPEATS:-3}"
OUT="$BUILD/encrypt"

ensure_deps
build_mpi_coll
mkdir -p "$OUT"
rm -f "$OUT"/*.txt

run_points() { # name pass command-prefix...
  local name=$1 pass=$2
  shift 2
  local file="$OUT/$name-$pass"
  log "pass $pass, $name: $(quote "$@") -b 8 -e 8 -w 50 -i $LAT_ITERS"
  "$@" -b 8 -e 8 -w 50 -i "$LAT_ITERS" >"$file.txt" 2>"$file.err"
  log "pass $pass, $name: $(quote "$@") -b 1M -e 64M -f 64 -w 3 -i $BW_ITERS"
  "$@" -b 1M -e 64M -f 64 -w 3 -i "$BW_ITERS" >>"$file.txt" 2>>"$file.err"
}

for pass in $(seq 1 "$REPEATS"); do
  SPARKCCL_ENCRYPT=false run_points plain "$pass" \
    bin/sparkccl-perf -n "$RANKS" -t socket -o allreduce -d float32 -r sum -c 1
  SPARKCCL_ENCRYPT=true run_points encrypted "$pass" \
    bin/sparkccl-perf -n "$RANKS" -t socket -o allreduce -d float32 -r sum -c 1
  run_points mpi-tcp "$pass" "${MPIRUN[@]}" "${MPI_TCP_ARGS[@]}" -np "$RANKS" "$MPI_BIN" \
    -o allreduce -d float32 -a 0
done

python3 bench/encrypt_table.py "$OUT" \
  "Date: $(date -u)" "Machine: $(uname -srm), $(nproc) cores, $RANKS ranks on loopback" \
  "Java: $(java -version 2>&1 | head -1)" \
  "OpenMPI: $(mpirun --version 2>&1 | head -1)" \
  "Command: bench/run-encrypt-bench.sh (RANKS=$RANKS LAT_ITERS=$LAT_ITERS BW_ITERS=$BW_ITERS REPEATS=$REPEATS)" \
  | tee "$BUILD/encrypt.md"
