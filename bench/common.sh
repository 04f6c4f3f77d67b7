# Shared by bench/run-*-bench.sh (sourced, not run): dependency install,
# compilation of bench/mpi_coll.c, helpers. Expects to run in the repo root.

BUILD=bench/build
MPI_BIN="$BUILD/mpi_coll"
MPIRUN=(mpirun --allow-run-as-root --oversubscribe)
MPI_TCP_ARGS=(--mca btl tcp,self --mca pml ob1 --mca btl_tcp_if_include lo)
# UCX's memory hooks patch a JVM's mmap/munmap/madvise/brk in place (docs/reliability.md).
export UCX_MEM_EVENTS="${UCX_MEM_EVENTS:-no}"
# UCX's error-signal handlers take the JVM's own SIGSEGVs where Jucx's library fails to load.
export UCX_ERROR_SIGNALS="${UCX_ERROR_SIGNALS-}"

log() { printf '==> %s\n' "$*" >&2; }

# Shell-quote only the words that need it (keeps 'tcp,self' readable).
quote() {
  local w out=()
  for w in "$@"; do
    if [[ $w =~ ^[A-Za-z0-9_./,:=+@%-]+$ ]]; then out+=("$w"); else out+=("$(printf '%q' "$w")"); fi
  done
  printf '%s' "${out[*]}"
}

# Installs OpenMPI (compiler + launcher) and python3 if missing.
ensure_deps() {
  local need=() SUDO=""
  command -v mpicc >/dev/null 2>&1 || need+=(libopenmpi-dev)
  command -v mpirun >/dev/null 2>&1 || need+=(openmpi-bin)
  command -v python3 >/dev/null 2>&1 || need+=(python3)
  ((${#need[@]})) || return 0
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  [[ " ${need[*]} " == *" libopenmpi-dev "* && " ${need[*]} " != *" openmpi-bin "* ]] && need+=(openmpi-bin)
  log "installing: ${need[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # apt-get update only if installing from the current package lists fails.
  if ! $SUDO apt-get install -y --no-install-recommends "${need[@]}"; then
    $SUDO apt-get update
    $SUDO apt-get install -y --no-install-recommends "${need[@]}"
  fi
}

# Compiles $MPI_BIN from bench/mpi_coll.c when missing or out of date.
build_mpi_coll() {
  mkdir -p "$BUILD"
  if ! grep -qxF 'bench/build/' .gitignore 2>/dev/null; then
    echo 'bench/build/' >>.gitignore
  fi
  if [[ ! -x $MPI_BIN || bench/mpi_coll.c -nt $MPI_BIN ]]; then
    log "compiling $MPI_BIN"
    mpicc -O2 -std=c11 -Wall -o "$MPI_BIN" bench/mpi_coll.c -lm
  fi
}

# Runs the perf tool with JVM options in every JVM it starts (the launcher and each rank process,
# through JAVA_TOOL_OPTIONS), its output also in OUT_DIR/perf.txt: bench/profile.sh's profiler,
# bench/waits.sh's flight recording. PERF (default bin/sparkccl-perf) is split into words without
# globbing, since a class path may end in lib/*.
#   perf_with_jvm_options OUT_DIR JVM_OPTIONS PERF_OPTIONS...
perf_with_jvm_options() {
  local out="$1" jvm="$2" perf_cmd
  shift 2
  read -r -a perf_cmd <<<"${PERF:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/bin/sparkccl-perf}"
  JAVA_TOOL_OPTIONS="${JAVA_TOOL_OPTIONS:+$JAVA_TOOL_OPTIONS }$jvm" "${perf_cmd[@]}" "$@" | tee "$out/perf.txt"
}
