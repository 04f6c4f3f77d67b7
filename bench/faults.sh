#!/usr/bin/env bash
# Full-size runs of the fault tests whose CI sizes are smaller: the soak of 1,000 communicators
# over sockets and 300 over UCX (CI: 300 over sockets). Prints each run's figures (lines starting
# with the test's name). The fuzzer (10,000 frames), the two-host, relay and local-cluster tests
# already run at full size in bin/run-tests.
#   bench/faults.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
nice -n 10 mvn -o -q -B test-compile -pl native-engine
for run in "1000 socket" "300 ucx"; do
  set -- $run
  nice -n 10 mvn -o -B surefire:test -pl native-engine -Dtest=SoakTest \
    -Dsparkccl.soak.count="$1" -Dsparkccl.soak.transport="$2" 2>&1 \
    | grep -E '^SoakTest: [0-9]+ communicators \(|\[ERROR\]|Tests run:'
done
