#!/usr/bin/env bash
# allReduce float32 (sum, in place) from Python barrier tasks on local[4] (sparkccl.run on shared
# arrays) against the Java in-task communicator in the same application, at 8 B and 64 MiB, ROUNDS
# rounds alternating; then the Python peer, mpi4py over OpenMPI (4 processes, shared memory), as
# many rounds. Prints medians and the ratios docs/benchmarks.md quotes. Needs the jars
# (mvn -o package -pl examples -am -DskipTests); installs OpenMPI (apt-get) and mpi4py (pip)
# where they are missing.
#   bench/run-python-bench.sh [ROUNDS=3]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=bench/common.sh
source bench/common.sh
ensure_deps
rounds="${1:-3}"
if ! python3 -c 'import mpi4py' 2>/dev/null; then
  python3 -m pip install -q mpi4py >&2 || python3 -m pip install -q --break-system-packages mpi4py >&2
fi
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
python3 bench/python_bench.py "$rounds" 2>/dev/null | grep -E '^(round|RESULT)' | tee -a "$out"
root=()
[[ $(id -u) -eq 0 ]] && root=(--allow-run-as-root)
for ((i = 1; i <= rounds; i++)); do
  mpirun "${root[@]}" --oversubscribe -np 4 python3 bench/mpi4py_allreduce.py | grep '^RESULT' | tee -a "$out"
done
python3 - "$out" <<'PY'
import json, statistics, sys
spark, mpi = {}, {}
for line in open(sys.argv[1]):
    if line.startswith("RESULT "):
        r = json.loads(line[7:])
        for k, v in r.items():
            (mpi if k.startswith("mpi4py") else spark).setdefault(k, []).append(v["median_us"])
med = {k: statistics.median(v) for d in (spark, mpi) for k, v in d.items()}
bw = lambda k, b: b / (med[k] / 1e6) * 2 * 3 / 4 / 1e9
big = 64 << 20
print("8 B median: python %.1f us, java %.1f us, mpi4py %.1f us; python/java %.2fx (target <= 1.5),"
      " python/mpi4py %.2fx; the channel's own round trip %.1f us"
      % (med["python_8"], med["java_8"], med["mpi4py_8"], med["python_8"] / med["java_8"],
         med["python_8"] / med["mpi4py_8"], med["channel_ping_0"]))
print("64 MiB busbw: python %.2f GB/s, java %.2f GB/s, mpi4py %.2f GB/s; python/java %.2fx"
      " (target >= 0.9), python/mpi4py %.2fx" % (bw("python_%d" % big, big), bw("java_%d" % big, big),
      bw("mpi4py_%d" % big, big), med["java_%d" % big] / med["python_%d" % big],
      med["mpi4py_%d" % big] / med["python_%d" % big]))
PY
