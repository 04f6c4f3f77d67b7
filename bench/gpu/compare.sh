#!/usr/bin/env bash
# SparkCCL against NCCL (through torch) on the GPUs of one host, in one run, one table:
#   bash DIR/compare.sh DIR [NRANKS]          (DIR: what bench/gpu/pack.sh packed; default 2 ranks)
# Every rank is a process on GPU rank mod (GPUs). float32 sum allReduce at 8 B, 8 MiB and 512 MiB.
# NCCL paths: default (NVLink/PCIe P2P), NCCL_P2P_DISABLE=1 (shared host memory), and the network
# path (P2P, SHM and IB disabled: sockets); NCCL_NVLS_ENABLE=0 always. SparkCCL paths: peer
# (transport=auto, p2p=auto), host-staged (p2p=off: shared pinned host memory), ucx, socket.
# Both sides time the same way: warm-up, barrier, then blocking calls (torch: all_reduce then
# torch.cuda.synchronize()), time per call = the slowest rank's mean; busbw = algbw * 2(n-1)/n.
# Env: CHANNELS (SparkCCL nChannels for peer and host-staged, default 16), BUFF (buffSize, 16M),
# BLOCKS (cuda.blocks for them, default 0: automatic).
set -uo pipefail
DIR="$(realpath "${1:-.device-cuda}")"
N="${2:-2}"
OUT="${OUT:-/tmp/sparkccl-gpu-out}"
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0
export CUDA_DEVICE_MAX_CONNECTIONS=32
export SPARKCCL_CUDA_CACHE="${SPARKCCL_CUDA_CACHE:-/tmp/sparkccl-cuda-cache}"
export PATH="$PATH:/usr/local/cuda/bin"
JAVA=("$DIR/jre/bin/java" -Xmx4g -Dorg.apache.logging.log4j.simplelog.StatusLogger.level=OFF
      -Dorg.apache.logging.log4j.level=WARN)
CP="$DIR/lib/*:$DIR/test-classes"
RES="$OUT/compare.txt"
: >"$RES"

nccl() { # $1 label, rest: env
  local label="$1"; shift
  env "$@" timeout 300 python3 "$DIR/nccl_allreduce.py" "$N" "$label" 8 8388608 536870912 \
    2>>"$OUT/nccl.err" | tee -a "$RES"
}

sparkccl() { # $1 label, $2 transport, rest: env
  local label="$1" t="$2"; shift 2
  for range in "-b 8 -e 8 -w 200 -i 1000" "-b 8M -e 8M -w 10 -i 50" "-b 512M -e 512M -w 3 -i 10"; do
    env "$@" timeout 300 "${JAVA[@]}" -cp "$CP" org.sparkccl.perf.PerfTool --device cuda -n "$N" \
      -t "$t" -o allreduce -d float32 -r sum $range -c 0 --jit-warmup "${JIT_WARMUP:-20000}" 2>>"$OUT/sparkccl.err" |
      tee -a "$OUT/perf-$label.log" |
      awk -v l="$label" '$1 ~ /^[0-9]+$/ && NF >= 9 { print l, $1, $6, $8 }' | tee -a "$RES"
  done
}

nvidia-smi topo -m 2>/dev/null | head -8
CH="${CHANNELS:-16}"
BF="${BUFF:-16M}"
BL="${BLOCKS:-0}"
nccl nccl-default
nccl nccl-p2p-off NCCL_P2P_DISABLE=1
nccl nccl-socket NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1
sparkccl sparkccl-peer auto SPARKCCL_P2P=auto SPARKCCL_NCHANNELS="$CH" SPARKCCL_BUFFSIZE="$BF" SPARKCCL_CUDA_BLOCKS="$BL"
sparkccl sparkccl-host-staged auto SPARKCCL_P2P=off SPARKCCL_NCHANNELS="$CH" SPARKCCL_BUFFSIZE="$BF" SPARKCCL_CUDA_BLOCKS="$BL"
sparkccl sparkccl-ucx ucx SPARKCCL_NCHANNELS=4
sparkccl sparkccl-socket socket SPARKCCL_NCHANNELS=4 SPARKCCL_SOCKET_NTHREADS=2
python3 - "$RES" "$N" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    p = line.split()
    if len(p) == 4:
        rows.setdefault(p[0], {})[int(p[1])] = (float(p[2]), float(p[3]))
peer = {"sparkccl-peer": "nccl-default", "sparkccl-host-staged": "nccl-p2p-off",
        "sparkccl-ucx": "nccl-socket", "sparkccl-socket": "nccl-socket"}
print(f"\nallReduce float32 sum, {sys.argv[2]} ranks (processes, one per GPU)")
print("| path | 8 B | 8 MiB | 512 MiB busbw | 512 MiB vs NCCL peer |")
print("|---|---|---|---|---|")
for label in ["nccl-default", "nccl-p2p-off", "nccl-socket", "sparkccl-peer",
              "sparkccl-host-staged", "sparkccl-ucx", "sparkccl-socket"]:
    r = rows.get(label, {})
    def t(b):
        return f"{r[b][0]:.0f} us" if b in r else "-"
    big = r.get(536870912)
    ratio = "-"
    if big and label in peer and 536870912 in rows.get(peer[label], {}):
        ratio = f"{big[1] / rows[peer[label]][536870912][1]:.2f}x {peer[label]}"
    print(f"| {label} | {t(8)} | {t(8388608)} | {big[1]:.1f} GB/s |" if big else f"| {label} | {t(8)} | {t(8388608)} | - |", ratio, "|")
PY
