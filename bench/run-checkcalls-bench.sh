#!/usr/bin/env bash
# What the cross-rank mismatch check (key checkCalls) costs at 8 B: a float32 collective (OP,
# allReduce by default) with the check off (old) and on (new), alternated in the same run for
# ROUNDS rounds; prints the median time of each and the ratio on/off per algorithm.
#   bench/run-checkcalls-bench.sh [ROUNDS]    RANKS [4]  TRANSPORT [socket]  OP [allreduce]
#   ALGOS ["ring rd" for allreduce, else "ring tree": recursive doubling is allReduce's only;
#   auto: the tuner's choice]  ITERS [1000]  WARMUP [200]  JIT_WARMUP [20000]: untimed calls first, so
#   that the small-call path runs compiled, as in a long training loop (the perf tool's default)
#   SPARKCCL_PERF [bin/sparkccl-perf]: the command that runs the perf tool (bench/gpu/run.sh sets
#   it to the bundle's runtime on machines without Java)
#   PAIRED [unset]: with 1, each round is one start of the rank processes measuring both settings,
#   one communicator each, interleaved in PAIRED_ROUNDS [9] rounds of ITERS/PAIRED_ROUNDS calls
#   (the perf tool's --check-compare); a round's time is the median of its interleaved rounds.
#   Between starts of 8 rank processes on a 16-core host a round's time moves 2-3x with where the
#   threads land; within one start both settings share it.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROUNDS="${1:-7}"
RANKS="${RANKS:-4}"
OP="${OP:-allreduce}"
read -r -a PERF <<<"${SPARKCCL_PERF:-$ROOT/bin/sparkccl-perf}"
DEFAULT_ALGOS="ring tree"
[[ $OP == allreduce ]] && DEFAULT_ALGOS="ring rd"
RESULTS="$(mktemp)"
trap 'rm -f "$RESULTS"' EXIT
for ((r = 1; r <= ROUNDS; r++)); do
  for a in ${ALGOS:-$DEFAULT_ALGOS}; do
    if [[ ${PAIRED:-} == 1 ]]; then
      # the rows of the checkCalls=false block first, then those of checkCalls=true
      "${PERF[@]}" -n "$RANKS" -o "$OP" -d float32 -b 8 -e 8 -a "$a" -t "${TRANSPORT:-socket}" \
        -c 0 -w "${WARMUP:-200}" -i "${ITERS:-1000}" --jit-warmup "${JIT_WARMUP:-20000}" \
        --check-compare --rounds "${PAIRED_ROUNDS:-9}" |
        awk -v a="$a" '/^# sparkccl-perf:/ { label = /checkCalls=true/ ? "new" : "old" }
          $1 ~ /^[0-9]+$/ && NF >= 9 { print label, a, $6 }' >>"$RESULTS"
      continue
    fi
    order="false true"
    ((r % 2)) || order="true false" # which goes first changes from round to round
    for check in $order; do
      label=old
      [[ $check == true ]] && label=new
      SPARKCCL_CHECKCALLS=$check "${PERF[@]}" -n "$RANKS" -o "$OP" -d float32 -b 8 -e 8 -a "$a" \
        -t "${TRANSPORT:-socket}" -c 0 -w "${WARMUP:-200}" -i "${ITERS:-1000}" \
        --jit-warmup "${JIT_WARMUP:-20000}" |
        awk -v label="$label" -v a="$a" '$1 ~ /^[0-9]+$/ && NF >= 9 { print label, a, $6 }' >>"$RESULTS"
    done
  done
  echo "# round $r of $ROUNDS done" >&2
done
python3 "$ROOT/bench/ab_summary.py" "$RESULTS" "checkCalls=false" "checkCalls=true" \
  "$OP 8 B float32, $RANKS ranks, transport ${TRANSPORT:-socket} (size column: algorithm)"
