#!/usr/bin/env bash
# LogisticRegressionJob (MLlib's LogisticRegression against CclLogisticRegression, same job, same
# cached data, same settings: regParam, elasticNetParam 0, maxIter 100, tol 1e-6,
# standardization) on each master, each job a warm-up fit of both then REPEATS timed fits of each
# (medians); prints every RESULT line and the job's timing lines.
#   bench/run-logreg-bench.sh [ROWS=100000] [FEATURES=1000] [CLASSES=2] [REPEATS=3] [MASTERS...]
# Masters default to local[4] and local-cluster[2,2,3072]. The issue's other cases:
#   bench/run-logreg-bench.sh 10000 10000 2 3      # wide (add --max-iter 20 below via MAX_ITER)
#   bench/run-logreg-bench.sh 100000 1000 10 3     # multinomial, K = 10
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
rows="${1:-100000}"
features="${2:-1000}"
classes="${3:-2}"
repeats="${4:-3}"
shift $(($# < 4 ? $# : 4))
masters=("$@")
((${#masters[@]})) || masters=('local[4]' 'local-cluster[2,2,3072]')
max_iter="${MAX_ITER:-100}"
reg="${REG:-0.01}"
echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(nproc) cores; BLAS: $(ldconfig -p | grep -oE "lib(openblas|blas)\.so\.[0-9]+" | sort -u | paste -sd, - | grep . || echo "no system BLAS (Spark uses its Java BLAS)")"
for m in "${masters[@]}"; do
  echo "# master=$m rows=$rows features=$features classes=$classes repeats=$repeats maxIter=$max_iter regParam=$reg"
  bin/sparkccl-example logreg --master "$m" --partitions 4 --rows "$rows" --features "$features" \
    --classes "$classes" --repeats "$repeats" --max-iter "$max_iter" --reg "$reg" 2>/dev/null \
    | grep -E '^(#|RESULT)' || echo "RESULT failed master=$m"
done
rm -rf "$(bin/spark-home)/work"
