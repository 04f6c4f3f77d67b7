#!/usr/bin/env bash
# Transport benchmark (UCX against sockets): allReduce float32 sum with bin/sparkccl-perf -t ucx and
# -t socket, beside OpenMPI's MPI_Allreduce over shared memory (mpirun defaults) and over TCP,
# at 2 and 4 ranks, all in one run on this machine. Two points per setup: 8 bytes (latency) and
# 64 MiB (bus bandwidth). Results land in bench/build/transport/ and a table in
# bench/build/transport.md.
#
# Environment overrides (defaults in brackets):
#   RANKS_LIST ["2 4"]  LAT_ITERS [500]  BW_ITERS [10]
#   REPEATS [3]: passes over every setup, interleaved so that the shared machine's load falls on
#                all of them alike; the table gives each setup's median
#   UCX_TLS, UCX_NET_DEVICES: passed to UCX unchanged (unset: UCX's defaults)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=bench/common.sh
source bench/common.sh

RANKS_LIST="${RANKS_LIST:-2 4}"
LAT_ITERS="${LAT_ITERS:-500}"
BW_ITERS="${BW_ITERS:-10}"
REPEATS="${REPEATS:-3}"
OUT="$BUILD/transport"

ensure_deps
build_mpi_coll
mkdir -p "$OUT"
rm -f "$OUT"/*.txt

# one setup, two points: 8 B with many iterations, 64 MiB with few
run_points() { # name ranks pass command-prefix...
  local name=$1 n=$2 pass=$3
  shift 3
  local file="$OUT/$name-$n-$pass"
  log "pass $pass, $name n=$n: $(quote "$@") -b 8 -e 8 -w 50 -i $LAT_ITERS"
  "$@" -b 8 -e 8 -w 50 -i "$LAT_ITERS" >"$file.txt" 2>"$file.err"
  log "pass $pass, $name n=$n: $(quote "$@") -b 64M -e 64M -w 3 -i $BW_ITERS"
  "$@" -b 64M -e 64M -w 3 -i "$BW_ITERS" >>"$file.txt" 2>>"$file.err"
}

for pass in $(seq 1 "$REPEATS"); do
  for n in $RANKS_LIST; do
    run_points ucx "$n" "$pass" bin/sparkccl-perf --device host -n "$n" -t ucx -o allreduce -d float32 -r sum -c 1
    run_points socket "$n" "$pass" bin/sparkccl-perf --device host -n "$n" -t socket -o allreduce -d float32 \
      -r sum -c 1
    run_points mpi-shm "$n" "$pass" "${MPIRUN[@]}" -np "$n" "$MPI_BIN" -o allreduce -d float32 -a 0
    run_points mpi-tcp "$n" "$pass" "${MPIRUN[@]}" "${MPI_TCP_ARGS[@]}" -np "$n" "$MPI_BIN" \
      -o allreduce -d float32 -a 0
  done
done

UCX_VERSION="$(dpkg-query -W -f='${Version}' libucx0 2>/dev/null || echo unknown)"
python3 bench/transport_table.py "$OUT" "$RANKS_LIST" \
  "Date: $(date -u)" "Machine: $(uname -srm), $(nproc) cores" \
  "UCX: libucx0 $UCX_VERSION, Jucx 1.12.1; UCX_TLS=${UCX_TLS:-unset (UCX default)};\
 UCX_NET_DEVICES=${UCX_NET_DEVICES:-unset}" \
  "OpenMPI: $(mpirun --version 2>&1 | head -1)" \
  "Command: bench/run-transport-bench.sh (RANKS_LIST='$RANKS_LIST' LAT_ITERS=$LAT_ITERS BW_ITERS=$BW_ITERS REPEATS=$REPEATS)" \
  | tee "$BUILD/transport.md"
