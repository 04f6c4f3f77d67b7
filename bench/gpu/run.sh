#!/usr/bin/env bash
# The GPU suite and the benchmark of the CUDA backend, on a machine with a GPU and no Java:
# bench/gpu/pack.sh packs DIR on a build machine; copy DIR to the GPU machine and run there
#   bash DIR/run.sh DIR [smoke|suite|soak|bench|tune|local|tune-local|python|peer|blocks|compare|check|all|ab|ab-small|settings|gpu-ab|resident|latency|checkcost|collectives|lb|reduce]
#   bash DIR/run.sh DIR profile PERF_OPTIONS...   (bench/profile.sh with this bundle's perf tool)
#   bash DIR/run.sh DIR waits PERF_OPTIONS...     (bench/waits.sh with this bundle's perf tool)
#   bash DIR/run.sh DIR threads PERF_OPTIONS...   (bench/thread-cpu.sh with this bundle's perf tool)
# Logs go to $OUT (default /tmp/sparkccl-gpu-out) and summaries to stdout.
set -uo pipefail
# UCX's memory hooks patch a JVM's mmap/munmap/madvise/brk in place (docs/reliability.md).
export UCX_MEM_EVENTS="${UCX_MEM_EVENTS:-no}"
# UCX's error-signal handlers take the JVM's own SIGSEGVs where Jucx's library fails to load.
export UCX_ERROR_SIGNALS="${UCX_ERROR_SIGNALS-}"
DIR="$(realpath "${1:-.device-cuda}")"
MODE="${2:-all}"
OUT="${OUT:-/tmp/sparkccl-gpu-out}"
mkdir -p "$OUT"
# Every channel of every rank is a block spinning in its own stream; streams that share one of
# the driver's hardware queues serialise, so allow as many queues as there are (ranks x channels).
export CUDA_DEVICE_MAX_CONNECTIONS=32
export SPARKCCL_CUDA_CACHE="${SPARKCCL_CUDA_CACHE:-/tmp/sparkccl-cuda-cache}"
export PATH="$PATH:/usr/local/cuda/bin"
# log4j-api's simple logger (pack.sh leaves log4j-core out to keep the bundle small)
JAVA=("$DIR/jre/bin/java" -Xmx8g -XX:MaxDirectMemorySize=8g -Dorg.apache.logging.log4j.simplelog.StatusLogger.level=OFF
      -Dorg.apache.logging.log4j.level=WARN -Dorg.apache.logging.log4j.simplelog.org.sparkccl.device.cuda.level=INFO)
CP="$DIR/lib/*:$DIR/test-classes"
# untimed calls before a timed run of small messages, so that the JIT has compiled the engine's
# small-call path (the perf tool's --jit-warmup; see PerfRank.JIT_WARMUP_CALLS)
JIT="${JIT_WARMUP:-20000}"
status=0

info() {
  echo "== machine"
  date -u
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  nvcc --version | tail -2
  nproc
}

suite() { # $1: rank counts, $2: cases per rank count (0: all)
  echo "== GPU suite ranks=$1"
  "${JAVA[@]}" -cp "$CP" org.sparkccl.GpuSuiteMain "$1" "${2:-0}" 2>&1 | tee "$OUT/gpu-suite-${1//,/-}.log" | grep -v '^\s*at ' | tail -40
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
}

reduce_bench() { # $1: bytes
  echo "== reduce kernel vs cuMemcpyDtoD, $1"
  "${JAVA[@]}" -cp "$CP" org.sparkccl.perf.CudaReduceBench "$1" 2>&1 | tee "$OUT/reduce-$1.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
}

bind_ranks() { # $1: cores a rank; binds the perf tool's rank processes (all their threads) until killed
  local cpus pid r
  mapfile -t cpus < <(lscpu -p=CPU,CORE | grep -v '^#' | sort -t, -k2,2n -k1,1n | cut -d, -f1)
  while :; do
    for pid in $(pgrep -f 'org.sparkccl.perf.PerfTool.*--rank '); do
      r=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | sed -n 's/.*--rank \([0-9]*\) .*/\1/p')
      [ -n "$r" ] && taskset -a -cp "$(IFS=,; echo "${cpus[*]:$((r * $1)):$1}")" "$pid" >/dev/null 2>&1
    done
    sleep 0.1
  done
}

parse_setting() { # $1: NAME:ALGO[:VAR=VALUE,...] of the settings mode; sets name, algo, env_vars, cp, bind, floor
  local vars a assigns
  IFS=: read -r name algo vars <<<"$1"
  env_vars=() cp="$DIR/lib/*" bind=0 floor=0
  IFS=, read -r -a assigns <<<"${vars:-}"
  for a in "${assigns[@]}"; do
    case $a in
      JARS=*) cp="$DIR/${a#JARS=}/*:$cp" ;;
      BIND=*) bind="${a#BIND=}" ;;
      FLOOR=*) floor="${a#FLOOR=}" ;;
      *) env_vars+=("$a") ;;
    esac
  done
}

perf() { # $1: ranks, rest: perf options
  local n="$1"; shift
  echo "== sparkccl-perf --device cuda --threads -n $n $*"
  "${JAVA[@]}" -cp "$CP" org.sparkccl.perf.PerfTool --device cuda --threads -n "$n" "$@" 2>&1 | tee "$OUT/perf-n$n.log"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
}

resident_8b() { # 8 B allReduce, 2 ranks as threads on the GPU: a launch per collective against the
  # resident kernel, alternating, ROUNDS rounds (default 3); time_us per call
  echo "== 8 B allReduce, 2 ranks as threads, cuda.residentUs=0 (a launch per collective) vs default (resident)"
  for ((round = 1; round <= ${ROUNDS:-3}; round++)); do
    for t in socket local; do
      for r in 0 5000; do
        SPARKCCL_CUDA_RESIDENTUS=$r "${JAVA[@]}" -cp "$CP" org.sparkccl.perf.PerfTool --device cuda --threads \
          -n 2 -t $t -o allreduce -d float32 -b 8 -e 8 -w 100 -i 2000 -c 1 --jit-warmup "$JIT" 2>>"$OUT/resident-8b.err" |
          awk -v t=$t -v r=$r -v round=$round '$1 ~ /^[0-9]+$/ && NF >= 9 { print "round", round, "transport", t, "residentUs", r, "time_us", $6, "wrong", $9 }' |
          tee -a "$OUT/resident-8b.txt"
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      done
    done
  done
}

host_perf() { # the perf tool's command for checkcost, profile and waits; $1: its class path, rest:
  # the options it will get: host memory unless they name a --device
  local cp="$1" device="--device host"
  shift
  [[ " $* " == *" --device "* ]] && device=""
  echo "$DIR/jre/bin/java -Xmx1g -Dorg.apache.logging.log4j.level=WARN -cp $cp org.sparkccl.perf.PerfTool $device"
}

latency() { # bench/run-latency-bench.sh with this bundle's runtime: SparkCCL and OpenMPI, host memory;
  # $1: the operation (default allreduce)
  local op="${1:-allreduce}" name=latency
  [ "$op" = allreduce ] || name="latency-$op"
  echo "== bench/run-latency-bench.sh OP=$op"
  (cd "$DIR" && SPARKCCL_PERF="$DIR/jre/bin/java -Xmx1g -Dorg.apache.logging.log4j.level=WARN -cp $DIR/lib/* org.sparkccl.perf.PerfTool" \
    JAVA_CMD="$DIR/jre/bin/java -cp $DIR/lib/*:$DIR/micro-classes" MICRO_CLASSES=1 OUT="$OUT/$name" OP="$op" \
    bash bench/run-latency-bench.sh) 2>&1 | tee "$OUT/$name.log" | grep -v '^==> pass'
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  # few files come back from a remote run: the table, the summary and the plots as they are,
  # every run's files in one archive
  cp "$OUT/$name/table.md" "$OUT/$name-table.md" 2>/dev/null
  cp "$OUT/$name/summary.json" "$OUT/$name-summary.json" 2>/dev/null
  cp "$OUT/$name"/*.png "$OUT/" 2>/dev/null
  tar czf "$OUT/$name-runs.tgz" -C "$OUT" "$name" && rm -rf "$OUT/$name"
}

info | tee "$OUT/machine.txt"
case "$MODE" in
  smoke)
    suite 2 40
    reduce_bench 256M
    perf 2 -b 8 -e 16M -f 8 -w 2 -i 5 -c 1 --jit-warmup 100
    ;;
  suite) suite 1,2,4,8 0 ;;
  soak)
    # COUNT communicators (default 1,000) of 2 thread ranks on GPU 0, normal, aborted and timed out:
    # threads, file descriptors, off-heap bytes and GPU memory in use must come back
    echo "== GPU soak, ${COUNT:-1000} communicators"
    "${JAVA[@]}" -cp "$CP" org.sparkccl.GpuSoakMain "${COUNT:-1000}" 2>&1 | tee "$OUT/gpu-soak.log" | grep -E '^GPU soak' | tail -20
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    ;;
  bench)
    reduce_bench 1G
    perf 2 -b 8 -e 1G -f 2 -w 2 -i 5 -c 0 --jit-warmup 200
    perf 4 -b 8 -e 1G -f 2 -w 2 -i 5 -c 0 --jit-warmup 200
    ;;
  tune)
    # engine settings for the host-staged path: more channels (rings) and socket helper threads
    for v in "1 0 1 4M" "4 0 1 4M" "4 2 2 4M" "8 4 1 8M" "8 2 2 4M"; do
      set -- $v
      echo "== channels=$1 socket.nThreads=$2 nSocksPerThread=$3 buffSize=$4"
      for n in 2 4; do
        SPARKCCL_NCHANNELS=$1 SPARKCCL_SOCKET_NTHREADS=$2 SPARKCCL_SOCKET_NSOCKSPERTHREAD=$3 SPARKCCL_BUFFSIZE=$4 \
          "${JAVA[@]}" -cp "$CP" org.sparkccl.perf.PerfTool --device cuda --threads -n $n -b 64M -e 1G -f 4 \
          -w 1 -i 3 -c 0 --jit-warmup 20 2>&1 | grep -E '^ +[0-9]|pinned|sparkccl-perf:' | sed "s/^/n=$n $1\/$2\/$3\/$4 /"
      done
    done
    ;;
  local)
    # the in-process transport (ranks as threads copy slots between their FIFOs)
    SPARKCCL_TRANSPORT=local suite 2,4,8 0
    for ch in 1 2 4; do
      for n in 2 4; do
        SPARKCCL_NCHANNELS=$ch "${JAVA[@]}" -cp "$CP" org.sparkccl.perf.PerfTool --device cuda --threads -t local \
          -n $n -b 64M -e 1G -f 4 -w 1 -i 3 -c 0 --jit-warmup 20 2>&1 | grep -E '^ +[0-9]|sparkccl-perf:|Out of' | sed "s/^/n=$n channels=$ch /"
      done
    done
    SPARKCCL_NCHANNELS=4 perf 2 -t local -b 8 -e 1G -f 2 -w 2 -i 5 -c 0 --jit-warmup 200
    SPARKCCL_NCHANNELS=4 perf 4 -t local -b 8 -e 1G -f 2 -w 2 -i 5 -c 0 --jit-warmup 200
    ;;
  tune-local)
    for v in "4 4M" "6 4M" "8 4M" "4 8M" "8 8M"; do
      set -- $v
      for n in 2 4; do
        SPARKCCL_NCHANNELS=$1 SPARKCCL_BUFFSIZE=$2 "${JAVA[@]}" -cp "$CP" org.sparkccl.perf.PerfTool --device cuda --threads \
          -t local -n $n -b 64M -e 1G -f 4 -w 1 -i 3 -c 0 --jit-warmup 20 2>&1 | grep -E '^ +[0-9]|sparkccl-perf:' | sed "s/^/n=$n channels=$1 buffSize=$2 /"
      done
    done
    ;;
  ab)
    # this build against the one pack.sh put in baseline-lib (BASELINE=<rev>), host memory,
    # RANKS rank processes (default 4), alternating, ROUNDS rounds (default 5) of ITERS timed
    # iterations (default 50); medians and ratio for each of OPS (default allreduce) at SIZES
    # (default 8 1M 64M)
    [ -d "$DIR/baseline-lib" ] || { echo "no $DIR/baseline-lib: pack with BASELINE=<rev>"; exit 2; }
    : >"$OUT/ab.txt"
    for ((round = 1; round <= ${ROUNDS:-5}; round++)); do
      for n in ${RANKS:-4}; do
        for op in ${OPS:-allreduce}; do
          for size in ${SIZES:-8 1M 64M}; do
            sides=(old new)
            ((round % 2)) || sides=(new old)
            for side in "${sides[@]}"; do
              lib="$DIR/lib"
              [ "$side" = old ] && lib="$DIR/baseline-lib"
              timeout 120 "${JAVA[@]}" -cp "$lib/*" org.sparkccl.perf.PerfTool --device host -n "$n" -o "$op" \
                -d float32 -b "$size" -e "$size" -w 10 -i "${ITERS:-50}" -c 0 2>>"$OUT/ab.err" |
                awk -v side="$side" -v key="$n/$op/$size" '$1 ~ /^[0-9]+$/ && NF >= 9 { print side, key, $6 }' \
                >>"$OUT/ab.txt"
            done
          done
        done
      done
      echo "round $round done"
    done
    python3 "$DIR/ab_summary.py" "$OUT/ab.txt" baseline this "float32, host memory, rows: ranks/operation/size"
    ;;
  ab-small)
    # this build against the one in baseline-lib (BASELINE=<rev>) for small collectives of host
    # memory: BYTES (default 8) for each of CFGS (ranks/transport/algo/operation), idle IDLE
    # (default auto), alternating which side runs first, ROUNDS rounds (default 3) of ITERS timed
    # calls (default 2000, 400 at 8 ranks or more) after WARMUP (default 100) and the JIT's
    # warm-up; results checked; medians and ratio per setup. OLD_LIB
    # (default DIR/baseline-lib) and OLD_IDLE (default IDLE) set the "old" side: OLD_LIB=DIR/lib
    # OLD_IDLE=backoff IDLE=auto compares two idle modes of this build
    old_lib="${OLD_LIB:-$DIR/baseline-lib}"
    [ -d "$old_lib" ] || { echo "no $old_lib: pack with BASELINE=<rev>"; exit 2; }
    : >"$OUT/ab-small.txt"
    for ((round = 1; round <= ${ROUNDS:-3}; round++)); do
      for cfg in ${CFGS:-4/socket/rd/allreduce 4/socket/auto/allreduce 4/ucx/auto/allreduce 4/ucx/rd/allreduce 4/socket/auto/broadcast 8/socket/rd/allreduce 8/ucx/auto/allreduce}; do
        IFS=/ read -r n t a op <<<"$cfg"
        iters=2000
        [ "$n" -ge 8 ] && iters=400
        iters="${ITERS:-$iters}"
        sides=(old new)
        ((round % 2)) || sides=(new old)
        for side in "${sides[@]}"; do
          lib="$DIR/lib" idle="${IDLE:-auto}"
          [ "$side" = old ] && lib="$old_lib" idle="${OLD_IDLE:-$idle}"
          SPARKCCL_IDLE="$idle" timeout 300 "${JAVA[@]}" -cp "$lib/*" org.sparkccl.perf.PerfTool \
            --device host -n "$n" -t "$t" -a "$a" -o "$op" -d float32 -b "${BYTES:-8}" -e "${BYTES:-8}" \
            -w "${WARMUP:-100}" -i "$iters" -c 1 --jit-warmup "$JIT" 2>>"$OUT/ab-small.err" |
            awk -v side="$side" -v cfg="$cfg" '$1 ~ /^[0-9]+$/ && NF >= 9 {
              if ($9 != 0) print "WRONG results:", side, cfg > "/dev/stderr"; else print side, cfg, $6 }' \
            >>"$OUT/ab-small.txt"
          [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
        done
      done
      echo "round $round done"
    done
    python3 "$DIR/ab_summary.py" "$OUT/ab-small.txt" baseline this \
      "${BYTES:-8} B, host memory, idle=${OLD_IDLE:-${IDLE:-auto}} (old) / ${IDLE:-auto} (new); rows: ranks/transport/algo/operation"
    ;;
  settings)
    # one collective of host memory under several engine settings, alternated, with OpenMPI over
    # TCP in every round (MPI=0 leaves it out): SETTINGS lists NAME:ALGO[:VAR=VALUE,...], VAR an
    # environment variable (SPARKCCL_BUFFSIZE, SPARKCCL_IDLE, ...), JARS, a folder of DIR whose
    # jars go first on the class path (another commit's engine: pack.sh's ENGINES), or BIND=K, which
    # binds rank r's process and its threads to K cores of its own (the r-th K of the CPUs ordered by
    # core, with taskset, re-applied every 0.1 s while it runs; a setting whose RANKS x K exceed the
    # host's CPUs is refused before the first round), or FLOOR=L, which runs the Java ring's floor
    # with L threads a rank (bench/micro/TcpRingFloor.java; ALGO unused; its other VAR=VALUE, such
    # as FLOOR_PIECE, FLOOR_SOCKBUF and FLOOR_NOISE, set its environment) instead of the engine; RANKS (default
    # 8), TRANSPORT (socket), OP (allreduce), sizes MIN to MAX by FACTOR (1M, 8M, 2), WARMUP (20)
    # and ITERS (40) calls a size after the JIT's warm-up (JIT_WARMUP), ROUNDS rounds (3); results
    # checked; medians per setting and size, the ratio to OpenMPI's median, and the median of the
    # rounds' own ratios with its 95% interval from 6 rounds (bench/settings_summary.py) in
    # $OUT/settings.txt. On one host, after 200 JIT warm-up calls and 300 at the size, the 8-rank
    # allReduce at 1 MiB (the ring, chosen) took 1.9x its time after 2,000 at the size; on another,
    # 2,000 calls a size changed less than the host's spread (docs/benchmarks.md)
    source "$DIR/bench/common.sh" # OpenMPI's command line over TCP, and mpi_coll's build
    if [ "${MPI:-1}" = 1 ]; then
      (cd "$DIR" && build_mpi_coll) || status=1
    fi
    : >"$OUT/settings-runs.txt"
    binder=""
    trap '[ -z "$binder" ] || kill "$binder" 2>/dev/null' EXIT # a run cut short leaves no binder
    sizes=(-b "${MIN:-1M}" -e "${MAX:-8M}" -f "${FACTOR:-2}" -w "${WARMUP:-20}" -i "${ITERS:-40}")
    runnable=()
    for setting in ${SETTINGS:-ring:ring rh:rh}; do
      parse_setting "$setting"
      if [ "$bind" -gt 0 ] && [ $((${RANKS:-8} * bind)) -gt "$(nproc --all)" ]; then
        echo "setting $name: BIND=$bind needs ${RANKS:-8} x $bind cores; this host has $(nproc --all)" >&2
        status=1
      else
        runnable+=("$setting")
      fi
    done
    mpi_round() {
      [ "${MPI:-1}" = 1 ] || return 0
      "${MPIRUN[@]}" "${MPI_TCP_ARGS[@]}" -np "${RANKS:-8}" "$DIR/$MPI_BIN" -o "${OP:-allreduce}" -d float32 \
        "${sizes[@]}" -a 0 2>>"$OUT/settings.err" |
        awk -v r="$round" '$1 ~ /^[0-9]+$/ && NF >= 9 { print "openmpi-tcp", $1, $6, r }' >>"$OUT/settings-runs.txt"
    }
    floor_round() { # bench/micro/TcpRingFloor.java with $floor threads a rank, each size of the round
      local b=$(numfmt --from=iec "${MIN:-1M}") max=$(numfmt --from=iec "${MAX:-8M}")
      for (( ; b <= max; b *= ${FACTOR:-2})); do
        env "${env_vars[@]}" timeout 300 "${JAVA[@]}" -cp "$DIR/micro-classes" TcpRingFloor \
          "${RANKS:-8}" "$floor" "$b" "${ITERS:-40}" 1 "${WARMUP:-20}" 2>>"$OUT/settings.err" |
          awk -v n="$name" -v r="$round" '{ print n, $2, $3, r }' >>"$OUT/settings-runs.txt"
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      done
    }
    for ((round = 1; round <= ${ROUNDS:-3}; round++)); do
      # OpenMPI after the settings in odd rounds and before them in even ones, so that neither
      # always runs on the host its neighbour left (each round's pair gives one ratio)
      ((round % 2)) || mpi_round
      for setting in "${runnable[@]}"; do
        parse_setting "$setting"
        if [ "$floor" -gt 0 ]; then
          floor_round
          continue
        fi
        if [ "$bind" -gt 0 ]; then
          bind_ranks "$bind" &
          binder=$!
        fi
        env "${env_vars[@]}" timeout 300 "${JAVA[@]}" -cp "$cp" org.sparkccl.perf.PerfTool --device host \
          -n "${RANKS:-8}" -t "${TRANSPORT:-socket}" -a "$algo" -o "${OP:-allreduce}" -d float32 "${sizes[@]}" \
          -c 1 --jit-warmup "$JIT" 2>>"$OUT/settings.err" |
          awk -v n="$name" -v r="$round" '$1 ~ /^[0-9]+$/ && NF >= 9 { if ($9 != 0) print "WRONG results:", n > "/dev/stderr"; else print n, $1, $6, r }' \
          >>"$OUT/settings-runs.txt"
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
        [ -z "$binder" ] || { kill "$binder"; wait "$binder" 2>/dev/null; binder=""; }
      done
      ((round % 2 == 0)) || mpi_round
      echo "round $round done"
    done
    python3 "$DIR/bench/settings_summary.py" "$OUT/settings-runs.txt" | tee "$OUT/settings.txt"
    ;;
  gpu-ab)
    # this build against the one pack.sh put in baseline-lib (BASELINE=<rev>) on the GPU: 2 rank
    # processes (one per GPU when there are 2), allReduce float32 at 8 MiB and 512 MiB for each of
    # CFGS (channels/cuda.blocks/buffSize, default "16/0/16M 1/16/1M"), then 8 B; alternating,
    # ROUNDS rounds (default 2); P2P=off takes the host-staged path instead of the peer one. The baseline's jars come first on its class path, so its Java
    # compiles and runs its own kernel source; JCuda's natives come from this bundle.
    [ -d "$DIR/baseline-lib" ] || { echo "no $DIR/baseline-lib: pack with BASELINE=<rev>"; exit 2; }
    : >"$OUT/gpu-ab.txt"
    for ((round = 1; round <= ${ROUNDS:-2}; round++)); do
      for cfg in ${CFGS:-16/0/16M 1/16/1M} 8B; do
        for side in old new; do
          cp="$DIR/lib/*"
          [ "$side" = old ] && cp="$DIR/baseline-lib/*:$DIR/lib/*"
          sizes=(-b 8M -e 512M -f 64 -w 3 -i 10 --jit-warmup 0) ch=16 bl=0 buff=16M
          [ "$cfg" = 8B ] && sizes=(-b 8 -e 8 -w 200 -i 1000 --jit-warmup "$JIT") || IFS=/ read -r ch bl buff <<<"$cfg"
          SPARKCCL_P2P="${P2P:-auto}" SPARKCCL_NCHANNELS=$ch SPARKCCL_CUDA_BLOCKS=$bl SPARKCCL_BUFFSIZE=$buff timeout 120 \
            "${JAVA[@]}" -cp "$cp" org.sparkccl.perf.PerfTool --device cuda -n 2 -o allreduce -d float32 \
            "${sizes[@]}" -c 1 2>>"$OUT/gpu-ab.err" |
            awk -v r=$round -v c=$cfg -v side=$side '$1 ~ /^[0-9]+$/ && NF >= 9 {
              print "round", r, side, "cfg", c, "bytes", $1, "time_us", $6, "busbw", $8, "wrong", $9 }' |
            tee -a "$OUT/gpu-ab.txt"
          [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
        done
      done
    done
    ;;
  resident)
    # the GPU suite with the resident kernel (the default) and with a launch per collective
    suite 1,2,4,8 0
    SPARKCCL_CUDA_RESIDENTUS=0 suite 2,4 0
    SPARKCCL_CUDA_RESIDENTUS=50 suite 8 80
    resident_8b
    ;;
  latency) latency ;;
  checkcost)
    # what the mismatch check costs at 8 B (bench/run-checkcalls-bench.sh: checkCalls off and on,
    # alternating) with this bundle's runtime, host memory, rank processes, for each of CFGS
    # (ranks/transport/operation), ROUNDS rounds (default 5) of ITERS calls (default 10000) after
    # the JIT's warm-up, algorithm ALGOS (default auto: the tuner's tree at 8 B), SHM (default off:
    # point-to-point edges on sockets, as between hosts); with AB=1, each config then again with
    # the build in baseline-lib (pack with BASELINE=<rev>), so that both builds' costs share a run;
    # both through this bundle's perf tool (its jar first on the class path), so that options such
    # as --check-compare (PAIRED=1, see bench/run-checkcalls-bench.sh) work with either engine
    libs=("$DIR/lib")
    if [ -n "${AB:-}" ]; then
      [ -d "$DIR/baseline-lib" ] || { echo "no $DIR/baseline-lib: pack with BASELINE=<rev>"; exit 2; }
      libs+=("$DIR/baseline-lib")
    fi
    tool="$(ls "$DIR"/lib/sparkccl-perf-*.jar)"
    for cfg in ${CFGS:-4/socket/broadcast 4/socket/reduce 8/socket/broadcast 8/socket/reduce 4/ucx/broadcast 4/ucx/reduce 8/ucx/broadcast 8/ucx/reduce}; do
      IFS=/ read -r n t op <<<"$cfg"
      for lib in "${libs[@]}"; do
        echo "== $cfg, $(basename "$lib"), $(date -u +%T)" | tee -a "$OUT/checkcost.txt"
        (cd "$DIR" && SPARKCCL_SHM="${SHM:-off}" RANKS="$n" TRANSPORT="$t" OP="$op" ALGOS="${ALGOS:-auto}" \
          ITERS="${ITERS:-10000}" JIT_WARMUP="$JIT" \
          SPARKCCL_PERF="$(host_perf "$tool:$lib/*")" \
          bash bench/run-checkcalls-bench.sh "${ROUNDS:-5}") 2>>"$OUT/checkcost.err" | tee -a "$OUT/checkcost.txt"
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      done
    done
    ;;
  profile)
    # the perf tool under the CPU profiler (bench/profile.sh; PROFILE_CALLS and the rest as there),
    # on host memory unless the options name a --device (the perf tool's default here is the GPU);
    # the profiles come back in one archive beside the summary
    (cd "$DIR" && PERF="$(host_perf "$DIR/lib/*" "${@:3}")" \
      PROFILER_LIB="$(ls "$DIR"/profiler/*.so)" bash bench/profile.sh "$OUT/profile" "${@:3}") || status=1
    cp "$OUT/profile/summary.txt" "$OUT/profile-summary.txt" 2>/dev/null
    tar czf "$OUT/profile.tgz" -C "$OUT" profile && rm -rf "$OUT/profile"
    ;;
  reduce)
    # the host reductions' speed: bench/micro/ReduceTypes.java (BYTES, default 262144; DTYPES,
    # default "float32 float64 bfloat16 float16 int32", one JVM each) with this bundle's engine
    # ("new") and with each folder of ENGINES that pack.sh filled (ENGINES="old" for DIR/old),
    # alternated REPEATS times (default 3); then bench/micro/ReduceBlocks.java at BYTES and 4 MiB
    for ((r = 1; r <= ${REPEATS:-3}; r++)); do
      for engine in new ${ENGINES:-}; do
        jars="$DIR/lib/*"
        [ "$engine" = new ] || jars="$DIR/$engine/*:$jars"
        for dtype in ${DTYPES:-float32 float64 bfloat16 float16 int32}; do
          "${JAVA[@]}" -cp "$DIR/micro-classes:$jars" ReduceTypes "${BYTES:-262144}" "$dtype" |
            sed "s/^/$engine /" | tee -a "$OUT/reduce.txt"
          [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
        done
      done
    done
    for bytes in "${BYTES:-262144}" 4194304; do
      "${JAVA[@]}" -cp "$DIR/micro-classes" ReduceBlocks "$bytes" | tee -a "$OUT/reduce.txt"
      [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    done
    ;;
  threads)
    # each thread's CPU in the middle of a perf run (bench/thread-cpu.sh; SAMPLE_AFTER as there)
    (cd "$DIR" && PERF="$(host_perf "$DIR/lib/*" "${@:3}")" \
      bash bench/thread-cpu.sh "$OUT/threads" "${@:3}") || status=1
    ;;
  waits)
    # where threads wait (bench/waits.sh; WAIT_CALLS as there), on host memory unless the options
    # name a --device; only the summary comes back (a recording of every park is large)
    (cd "$DIR" && PERF="$(host_perf "$DIR/lib/*" "${@:3}")" SUMMARY="$DIR/jre/bin/java -cp $DIR/lib/*" \
      bash bench/waits.sh "$OUT/waits" "${@:3}") || status=1
    cp "$OUT/waits/summary.txt" "$OUT/waits-summary.txt" 2>/dev/null
    cp "$OUT/waits/perf.txt" "$OUT/waits-perf.txt" 2>/dev/null
    rm -rf "$OUT/waits"
    ;;
  collectives)
    # busbw of every collective beside OpenMPI, host memory, rank processes: the latency bench for
    # each of OPS at mid and large sizes (MIN, MAX, FACTOR, SETUPS, RANKS_LIST, REPEATS, TIMED_MS
    # as there); the JIT's warm-up as the perf tool's default (with 2,000 calls the first size
    # measured the JIT)
    export MIN="${MIN:-16K}" MAX="${MAX:-16M}" FACTOR="${FACTOR:-4}" FLOOR=0
    export JIT_WARMUP="${JIT_WARMUP:-20000}" WARMUP="${WARMUP:-5}" ITERS="${ITERS:-20}"
    export SETUPS="${SETUPS:-auto-auto ucx-auto mpi-shm socket-auto mpi-tcp}"
    for op in ${OPS:-allreduce broadcast reduce allgather reducescatter}; do
      latency "$op"
    done
    # few files come back from a remote run: every table in one file, the rest in one archive
    (cd "$OUT" && cat latency*-table.md >collectives.md &&
      tar czf collectives.tgz latency*-table.md latency*-summary.json latency*.log latency*-runs.tgz ./*.png &&
      rm -f latency*-table.md latency*-summary.json latency*.log latency*-runs.tgz ./*.png)
    ;;
  lb)
    suite 1,2,4,8 0
    SPARKCCL_CUDA_RESIDENTUS=0 suite 2,4 0
    # a resident kernel that returns after 50 us idle: relaunches between most collectives
    SPARKCCL_CUDA_RESIDENTUS=50 suite 8 80
    resident_8b
    latency
    ;;
  python)
    # allReduce from Python worker processes through the executor's channel against Java threads
    # on the same engine, with no Spark (PythonChannelBenchMain plays the executor of local[N]):
    # RANKS (default 4) workers, ROUNDS rounds (default 3), once per CALLBOX setting (default:
    # true false, i.e. the call box against the socket, same run); idle=auto unless IDLE is set
    for box in ${CALLBOX:-true false}; do
      echo "== Python tasks vs Java threads, python.callBox=$box, idle=${IDLE:-auto}"
      SPARKCCL_PYTHON_CALLBOX=$box SPARKCCL_IDLE="${IDLE:-auto}" timeout 280 "${JAVA[@]}" \
        -cp "$DIR/plugin-classes:$CP" org.sparkccl.spark.worker.PythonChannelBenchMain \
        "${RANKS:-4}" "${ROUNDS:-3}" python3 "$DIR/bench/python_channel_worker.py" 2>&1 |
        tee "$OUT/python-callbox-$box.log" | grep -E "^round|^RESULT|rror" | grep -v "^\s*at "
      [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      python3 "$DIR/bench/python_channel_summary.py" "$OUT/python-callbox-$box.log" "${RANKS:-4}"
    done
    ;;
  peer)
    # direct edges between ranks of one host: threads (peer through device pointers, then shared
    # host memory), processes (CUDA IPC, shared host memory), a ring that mixes them with the network
    suite 2,4 "${CASES:-0}"
    SPARKCCL_P2P=off suite 2 "${CASES:-0}"
    for v in "auto 2" "off 2" "auto 3 mix" "auto 4"; do
      set -- $v
      echo "== GPU processes p2p=$1 n=$2 ${3:-}"
      SPARKCCL_P2P=$1 timeout 150 "${JAVA[@]}" -cp "$CP" org.sparkccl.GpuProcessMain "$2" ${3:-} 2>&1 |
        tee "$OUT/gpu-processes-$1-$2${3:-}.log" | grep -v '^\s*at ' | tail -12
      [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    done
    ;;
  blocks)
    # several CUDA blocks per channel: the suite with blocks forced on every edge (peer, shared
    # memory and the proxy's), ranks as processes over CUDA IPC, then 2 processes (one per GPU
    # when there are 2) at 8 MiB and 512 MiB for pairs of channels and blocks (0: automatic)
    # (CASES=0 skips the correctness part; SWEEP, BUFF and P2P change the sweep), then 8 B with one
    # block per channel against automatic
    [ "${CASES:-20}" = 0 ] || {
    SPARKCCL_CUDA_BLOCKS=4 suite 2,4 "${CASES:-20}"
    SPARKCCL_CUDA_BLOCKS=3 SPARKCCL_P2P=off suite 2 "${CASES:-20}"
    SPARKCCL_CUDA_BLOCKS=2 SPARKCCL_TRANSPORT=socket suite 2 "${CASES:-20}"
    for v in "auto 2" "off 2" "auto 4"; do
      set -- $v
      echo "== GPU processes p2p=$1 n=$2, cuda.blocks=3"
      SPARKCCL_CUDA_BLOCKS=3 SPARKCCL_P2P=$1 timeout 150 "${JAVA[@]}" -cp "$CP" org.sparkccl.GpuProcessMain "$2" 2>&1 |
        tee "$OUT/gpu-processes-blocks-$1-$2.log" | grep -v '^\s*at ' | tail -4
      [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    done
    }
    sweep="${SWEEP-16/1 16/0 16/2 8/4 16/4 8/8 32/2}"  # SWEEP= (empty): no sweep
    for v in $sweep; do
      ch="${v%/*}" bl="${v#*/}"
      for p in ${P2P:-auto off}; do
        SPARKCCL_P2P=$p SPARKCCL_NCHANNELS=$ch SPARKCCL_CUDA_BLOCKS=$bl SPARKCCL_BUFFSIZE="${BUFF:-16M}" \
          timeout 200 "${JAVA[@]}" -cp "$CP" org.sparkccl.perf.PerfTool --device cuda -n 2 -o allreduce \
          -d float32 -b 8M -e 512M -f 64 -w 3 -i 10 -c 1 --jit-warmup 0 2>>"$OUT/blocks.err" |
          awk -v p=$p -v ch=$ch -v bl=$bl '$1 ~ /^[0-9]+$/ && NF >= 9 { print "p2p", p, "channels", ch, "blocks", bl, "bytes", $1, "time_us", $6, "busbw", $8, "wrong", $9 }' |
          tee -a "$OUT/blocks.txt"
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      done
    done
    # 8 B between the 2 processes: one block per channel against automatic, alternating, ROUNDS
    # rounds (default 3) of 1,000 calls; 16 channels of BUFF
    for ((round = 1; round <= ${ROUNDS:-3}; round++)); do
      for bl in 1 0; do
        SPARKCCL_NCHANNELS=16 SPARKCCL_CUDA_BLOCKS=$bl SPARKCCL_BUFFSIZE="${BUFF:-16M}" \
          timeout 100 "${JAVA[@]}" -cp "$CP" org.sparkccl.perf.PerfTool --device cuda -n 2 -o allreduce \
          -d float32 -b 8 -e 8 -w 200 -i 1000 -c 1 --jit-warmup "$JIT" 2>>"$OUT/blocks.err" |
          awk -v r=$round -v bl=$bl '$1 ~ /^[0-9]+$/ && NF >= 9 { print "round", r, "blocks", bl, "8B time_us", $6, "wrong", $9 }' |
          tee -a "$OUT/blocks.txt"
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
      done
    done
    ;;
  compare) bash "$DIR/compare.sh" "$DIR" "${RANKS:-2}" || status=1 ;;
  check)
    suite 1,2,4,8 0
    SPARKCCL_TRANSPORT=local suite 2,4,8 0
    reduce_bench 1G
    ;;
  all)
    reduce_bench 1G
    perf 2 -b 8 -e 1G -f 2 -w 2 -i 5 -c 0 --jit-warmup 200
    perf 4 -b 8 -e 1G -f 2 -w 2 -i 5 -c 0 --jit-warmup 200
    suite 1,2,4,8 0
    ;;
esac
echo "== run.sh $MODE exit $status"
exit $status
