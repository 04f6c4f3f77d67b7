#!/usr/bin/env bash
# Same-run comparison of two revisions of the engine with the perf tool, for changes that must
# not change speed: builds each revision in a temporary worktree, then alternates them (which
# goes first changes from round to round) for ROUNDS rounds of allReduce (OP="..." for other
# operations) at 8 B, 1 MiB and 64 MiB (SIZES="..." for others) and prints the median time per size
# of each and their ratio (new / old). Engine
# settings come from SPARKCCL_* as for bin/sparkccl-perf; TRANSPORT=ucx|socket picks the ring (-t);
# RANKS (default 2) the rank count; WARMUP and ITERS (default 5 and 20) the calls before and in the
# timing; PERF_ARGS more perf tool options (e.g. --threads: ranks as threads of one JVM).
#
#   bench/perf-ab.sh OLD_REV [NEW_REV] [ROUNDS]     e.g. bench/perf-ab.sh HEAD~5 HEAD 5
set -euo pipefail
# UCX's memory hooks patch a JVM's mmap/munmap/madvise/brk in place (docs/reliability.md).
export UCX_MEM_EVENTS="${UCX_MEM_EVENTS:-no}"
# UCX's error-signal handlers take the JVM's own SIGSEGVs where Jucx's library fails to load.
export UCX_ERROR_SIGNALS="${UCX_ERROR_SIGNALS-}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OLD="${1:?usage: bench/perf-ab.sh OLD_REV [NEW_REV] [ROUNDS]}"
NEW="${2:-HEAD}"
ROUNDS="${3:-5}"
RANKS="${RANKS:-2}"
OP="${OP:-allreduce}"
DTYPES="${DTYPES:-float32}"
SIZES="${SIZES:-8 1M 64M}"
TRANSPORT="${TRANSPORT:-auto}"
WORK="$(mktemp -d)"
trap 'git -C "$ROOT" worktree remove --force "$WORK/old" >/dev/null 2>&1 || true;
      git -C "$ROOT" worktree remove --force "$WORK/new" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT

# Builds REV into DIR and prints the perf tool's class path (the perf tool moved from the engine's
# jar to a module of its own; either layout works).
build() {
  local rev="$1" dir="$2" module jar
  git -C "$ROOT" worktree add -q --detach "$dir" "$rev"
  module=native-engine
  [[ -f "$dir/perf/pom.xml" ]] && module=perf
  (cd "$dir" && mvn -B -q -o package -DskipTests -pl "$module" -am >&2)
  jar="$(ls "$dir/$module"/target/sparkccl-*.jar | grep -v -e sources -e tests | head -1)"
  printf '%s:%s/%s/target/lib/*' "$jar" "$dir" "$module"
}

echo "# building $OLD and $NEW" >&2
OLD_CP="$(build "$OLD" "$WORK/old")"
NEW_CP="$(build "$NEW" "$WORK/new")"

run() { # label class-path size operation dtype
  # shellcheck disable=SC2086 # options and PERF_ARGS split on spaces on purpose
  java -XX:+UseSerialGC -Xmx256m ${SPARKCCL_JAVA_OPTS:-} \
    -Dlog4j2.configurationFile="$ROOT/bin/log4j2.xml" -cp "$2" org.sparkccl.perf.PerfTool \
    -n "$RANKS" -o "$4" -t "$TRANSPORT" -d "$5" -b "$3" -e "$3" -w "${WARMUP:-5}" -i "${ITERS:-20}" ${PERF_ARGS:-} |
    awk -v label="$1" -v size="$3" -v op="$4" -v dtype="$5" \
      '$1 ~ /^[0-9]+$/ && NF >= 9 {
        print label, (op == "allreduce" ? "" : op ":") (dtype == "float32" ? "" : dtype ":") size, $6 }'
}

RESULTS="$WORK/results.txt"
for ((r = 1; r <= ROUNDS; r++)); do
  for op in $OP; do
    for dtype in $DTYPES; do
      for size in $SIZES; do
        # odd rounds run the old build first, even rounds the new one: whichever runs second in a
        # pair can find the machine warmer or busier
        if ((r % 2)); then
          run old "$OLD_CP" "$size" "$op" "$dtype" >>"$RESULTS"
          run new "$NEW_CP" "$size" "$op" "$dtype" >>"$RESULTS"
        else
          run new "$NEW_CP" "$size" "$op" "$dtype" >>"$RESULTS"
          run old "$OLD_CP" "$size" "$op" "$dtype" >>"$RESULTS"
        fi
      done
    done
  done
  echo "# round $r of $ROUNDS done" >&2
done

python3 "$ROOT/bench/ab_summary.py" "$RESULTS" "$OLD" "$NEW" "$DTYPES ($OP), $RANKS ranks"
