#!/usr/bin/env bash
# Allreduce benchmark: SparkCCL (bin/sparkccl-perf) vs OpenMPI over TCP
# (and, optionally, OpenMPI with its default shared-memory transport), all
# on this machine, in one run. Results land in bench/build/:
#   sparkccl.txt  mpi_tcp.txt  mpi_shm.txt  allreduce.md
#
# Environment overrides (defaults in brackets):
#   RANKS [4]  MINBYTES [8]  MAXBYTES [64M]  FACTOR [2]  DTYPE [float32]
#   OP [sum]  TRANSPORT [socket]  (SparkCCL -t)
#   SKIP_SPARKCCL=1   do not run bin/sparkccl-perf
#   SKIP_SHM=1        do not run OpenMPI with default transports
#   SPARKCCL_EXTRA_ARGS / MPI_EXTRA_ARGS  extra args (word-split), e.g.
#                     MPI_EXTRA_ARGS="-w 10 -i 50"
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

RANKS="${RANKS:-4}"
MINBYTES="${MINBYTES:-8}"
MAXBYTES="${MAXBYTES:-64M}"
FACTOR="${FACTOR:-2}"
DTYPE="${DTYPE:-float32}"
OP="${OP:-sum}"
TRANSPORT="${TRANSPORT:-socket}"
SKIP_SPARKCCL="${SKIP_SPARKCCL:-0}"
SKIP_SHM="${SKIP_SHM:-0}"
read -r -a SPARKCCL_EXTRA <<<"${SPARKCCL_EXTRA_ARGS:-}"
read -r -a MPI_EXTRA <<<"${MPI_EXTRA_ARGS:-}"

# shellcheck source=bench/common.sh
source bench/common.sh

# --- dependencies and build -------------------------------------------------
ensure_deps
build_mpi_coll
BIN="$MPI_BIN"

# --- runs -----------------------------------------------------------------
BENCH_ARGS=(-o allreduce -b "$MINBYTES" -e "$MAXBYTES" -f "$FACTOR" -d "$DTYPE" "${MPI_EXTRA[@]}")
[[ $OP == sum ]] || { echo "mpi_coll only supports OP=sum" >&2; exit 2; }

SPARK_CMD=(bin/sparkccl-perf --device host -n "$RANKS" -b "$MINBYTES" -e "$MAXBYTES" -f "$FACTOR"
           -t "$TRANSPORT" -d "$DTYPE" -r "$OP" "${SPARKCCL_EXTRA[@]}")
TCP_CMD=("${MPIRUN[@]}" "${MPI_TCP_ARGS[@]}" -np "$RANKS" "$BIN" "${BENCH_ARGS[@]}")
SHM_CMD=("${MPIRUN[@]}" -np "$RANKS" "$BIN" "${BENCH_ARGS[@]}")

CMDS=()
rm -f "$BUILD/sparkccl.txt" "$BUILD/mpi_tcp.txt" "$BUILD/mpi_shm.txt"

if [[ $SKIP_SPARKCCL == 1 ]]; then
  log "SKIP_SPARKCCL=1: not running SparkCCL"
else
  [[ -x bin/sparkccl-perf ]] || { echo "bin/sparkccl-perf not found or not executable (set SKIP_SPARKCCL=1 to skip)" >&2; exit 1; }
  log "SparkCCL: $(quote "${SPARK_CMD[@]}")"
  "${SPARK_CMD[@]}" 2>&1 | tee "$BUILD/sparkccl.txt"
  CMDS+=(--cmd "SparkCCL: $(quote "${SPARK_CMD[@]}") > $BUILD/sparkccl.txt")
fi

log "MPI-TCP: $(quote "${TCP_CMD[@]}")"
"${TCP_CMD[@]}" 2>&1 | tee "$BUILD/mpi_tcp.txt"
CMDS+=(--cmd "MPI-TCP: $(quote "${TCP_CMD[@]}") > $BUILD/mpi_tcp.txt")

if [[ $SKIP_SHM == 1 ]]; then
  log "SKIP_SHM=1: not running OpenMPI with default transports"
else
  log "MPI-shm: $(quote "${SHM_CMD[@]}")"
  "${SHM_CMD[@]}" 2>&1 | tee "$BUILD/mpi_shm.txt"
  CMDS+=(--cmd "MPI-shm: $(quote "${SHM_CMD[@]}") > $BUILD/mpi_shm.txt")
fi

# --- report ---------------------------------------------------------------
echo
python3 bench/compare.py \
  --sparkccl "$BUILD/sparkccl.txt" \
  --mpi-tcp "$BUILD/mpi_tcp.txt" \
  --mpi-shm "$BUILD/mpi_shm.txt" \
  --op allreduce \
  --title "Allreduce ($DTYPE $OP, $RANKS ranks, $MINBYTES..$MAXBYTES): SparkCCL vs OpenMPI" \
  --note "Date: $(date -u)" \
  --note "Machine: $(uname -a)" \
  --note "nproc: $(nproc)" \
  --note "OpenMPI: $(mpirun --version 2>&1 | head -1)" \
  "${CMDS[@]}" \
  --out "$BUILD/allreduce.md"
log "report written to $BUILD/allreduce.md"
