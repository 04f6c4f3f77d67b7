#!/usr/bin/env bash
# Collectives benchmark: SparkCCL (bin/sparkccl-perf) vs OpenMPI over TCP
# (bench/mpi_coll.c) for allreduce, broadcast, reduce, allgather and
# reducescatter, all on this machine, in one run. Results land in
# bench/build/:
#   coll_<op>_sparkccl.txt  coll_<op>_mpi_tcp.txt  coll_<op>.md  (per op)
#   collectives.md          header + one table per op
#
# Environment overrides (defaults in brackets):
#   OPS ["allreduce broadcast reduce allgather reducescatter"]
#   RANKS [4]  MINBYTES [8]  MAXBYTES [64M]  FACTOR [4]  DTYPE [float32]
#   REDOP [sum]  ROOT [0]  (root of broadcast and reduce)
#   SKIP_SPARKCCL=1   do not run bin/sparkccl-perf
#   SPARKCCL_EXTRA_ARGS / MPI_EXTRA_ARGS  extra args (word-split), e.g.
#                     MPI_EXTRA_ARGS="-w 10 -i 50"
# A run that fails (or reports wrong results and exits non-zero) does not stop
# the others; the script then exits 1 after writing the report.
set -euo pipefail

ROOT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT_DIR"

OPS="${OPS:-allreduce broadcast reduce allgather reducescatter}"
RANKS="${RANKS:-4}"
MINBYTES="${MINBYTES:-8}"
MAXBYTES="${MAXBYTES:-64M}"
FACTOR="${FACTOR:-4}"
DTYPE="${DTYPE:-float32}"
REDOP="${REDOP:-sum}"
ROOT="${ROOT:-0}"
SKIP_SPARKCCL="${SKIP_SPARKCCL:-0}"
read -r -a SPARKCCL_EXTRA <<<"${SPARKCCL_EXTRA_ARGS:-}"
read -r -a MPI_EXTRA <<<"${MPI_EXTRA_ARGS:-}"
read -r -a OP_LIST <<<"$OPS"

# shellcheck source=bench/common.sh
source bench/common.sh

[[ $REDOP == sum ]] || { echo "mpi_coll only supports REDOP=sum" >&2; exit 2; }
for op in "${OP_LIST[@]}"; do
  case $op in
    allreduce | broadcast | reduce | allgather | reducescatter) ;;
    *) echo "unknown op '$op' in OPS" >&2; exit 2 ;;
  esac
done
if [[ $SKIP_SPARKCCL != 1 && ! -x bin/sparkccl-perf ]]; then
  echo "bin/sparkccl-perf not found or not executable (set SKIP_SPARKCCL=1 to skip)" >&2
  exit 1
fi

# --- dependencies and build -------------------------------------------------
ensure_deps
build_mpi_coll

# --- runs -------------------------------------------------------------------
CMDS=()     # exact commands, for the report header
FAILED=()   # runs that exited non-zero
SECTIONS=() # per-op Markdown files, in order

for op in "${OP_LIST[@]}"; do
  root_spark=() root_mpi=() desc="$DTYPE $REDOP"
  case $op in
    broadcast) root_spark=(--root "$ROOT") root_mpi=(-R "$ROOT") desc="$DTYPE, root $ROOT" ;;
    reduce) root_spark=(--root "$ROOT") root_mpi=(-R "$ROOT") desc="$DTYPE $REDOP, root $ROOT" ;;
    allgather) desc="$DTYPE" ;;
  esac
  spark_out="$BUILD/coll_${op}_sparkccl.txt"
  tcp_out="$BUILD/coll_${op}_mpi_tcp.txt"
  md="$BUILD/coll_${op}.md"
  rm -f "$spark_out" "$tcp_out" "$md"

  SPARK_CMD=(bin/sparkccl-perf --device host -n "$RANKS" -b "$MINBYTES" -e "$MAXBYTES" -f "$FACTOR"
             -o "$op" -d "$DTYPE" -r "$REDOP" "${root_spark[@]}" "${SPARKCCL_EXTRA[@]}")
  TCP_CMD=("${MPIRUN[@]}" "${MPI_TCP_ARGS[@]}" -np "$RANKS" "$MPI_BIN"
           -o "$op" "${root_mpi[@]}" -b "$MINBYTES" -e "$MAXBYTES" -f "$FACTOR"
           -d "$DTYPE" "${MPI_EXTRA[@]}")

  if [[ $SKIP_SPARKCCL == 1 ]]; then
    log "SKIP_SPARKCCL=1: not running SparkCCL $op"
  else
    log "SparkCCL $op: $(quote "${SPARK_CMD[@]}")"
    CMDS+=(--cmd "$(quote "${SPARK_CMD[@]}") > $spark_out")
    if ! "${SPARK_CMD[@]}" 2>&1 | tee "$spark_out"; then
      FAILED+=("SparkCCL $op")
      log "SparkCCL $op FAILED (see $spark_out)"
    fi
  fi

  log "MPI-TCP $op: $(quote "${TCP_CMD[@]}")"
  CMDS+=(--cmd "$(quote "${TCP_CMD[@]}") > $tcp_out")
  if ! "${TCP_CMD[@]}" 2>&1 | tee "$tcp_out"; then
    FAILED+=("MPI-TCP $op")
    log "MPI-TCP $op FAILED (see $tcp_out)"
  fi

  python3 bench/compare.py --section --op "$op" \
    --title "$op ($desc, $RANKS ranks, $MINBYTES..$MAXBYTES, factor $FACTOR)" \
    --sparkccl "$spark_out" --mpi-tcp "$tcp_out" --out "$md" >/dev/null
  SECTIONS+=("$md")
done

# --- report -----------------------------------------------------------------
REPORT="$BUILD/collectives.md"
NOTES=(
  --note "Date: $(date -u)"
  --note "Machine: $(uname -a)"
  --note "nproc: $(nproc)"
  --note "OpenMPI: $(mpirun --version 2>&1 | head -1)"
  --note "Conventions (both tools, as nccl-tests): size = bytes of the larger buffer (allgather output, reducescatter input); busbw = algbw x 2(n-1)/n (allreduce), (n-1)/n (allgather, reducescatter), 1 (broadcast, reduce)"
)
if ((${#FAILED[@]})); then NOTES+=(--note "**FAILED runs:** ${FAILED[*]}"); fi
{
  python3 - "${NOTES[@]}" "${CMDS[@]}" <<'EOF'
import sys
args, notes, cmds = sys.argv[1:], [], []
for flag, value in zip(args[::2], args[1::2]):
    (notes if flag == "--note" else cmds).append(value)
print("# SparkCCL vs OpenMPI (TCP): collectives\n")
print("\n".join(f"- {n}" for n in notes))
print("\nCommands:\n\n```")
print("\n".join(cmds))
print("```")
EOF
  for md in "${SECTIONS[@]}"; do
    echo
    cat "$md"
  done
} >"$REPORT"

echo
cat "$REPORT"
log "report written to $REPORT"
if ((${#FAILED[@]})); then
  log "failed runs: ${FAILED[*]}"
  exit 1
fi
