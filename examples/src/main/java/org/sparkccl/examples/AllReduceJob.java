package org.sparkccl.examples;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import org.apache.spark.SparkConf;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.sparkccl.ReduceOp;
import org.sparkccl.spark.SparkCCL;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * The main job: P partitions each hold a random float32 array of N elements; SparkCCL all-reduces
 * them, the result is checked against a reference, then Spark's own {@code treeReduce} does the
 * same reduction. The last line is the result contract:
 *
 * <pre>
 * RESULT job=allreduce partitions=P elements=N correct=true|false sparkccl_ms=X
 *     treereduce_ms=Y speedup=Z
 * </pre>
 *
 * Submit with {@code bin/sparkccl-example allreduce [--partitions P] [--elements N]}.
 */
@Command(name = "allreduce", mixinStandardHelpOptions = true)
public final class AllReduceJob implements Runnable {
  @Option(names = "--partitions", description = "partitions (default ${DEFAULT-VALUE})")
  int partitions = 4;

  @Option(names = "--elements", description = "floats per partition (default ${DEFAULT-VALUE})")
  int elements = 16 << 20;

  public static void main(String[] args) {
    System.exit(new CommandLine(new AllReduceJob()).execute(args));
  }

  @Override
  public void run() {
    SparkConf conf = new SparkConf().setAppName("SparkCCL AllReduceJob");
    if (!conf.contains("spark.master")) {
      conf.setMaster("local[" + partitions + "]");
    }
    try (JavaSparkContext sc = new JavaSparkContext(conf)) {
      int n = elements;
      List<Integer> seeds = new ArrayList<>();
      for (int p = 0; p < partitions; p++) {
        seeds.add(p);
      }
      // Each partition makes its own random array on its executor: no data from the driver.
      JavaRDD<float[]> arrays =
          sc.parallelize(seeds, partitions).map(seed -> randomArray(seed, n)).cache();
      arrays.count();

      // One small round of each first, so neither timing includes class loading and JIT.
      JavaRDD<float[]> small =
          sc.parallelize(seeds, partitions).map(seed -> randomArray(seed, 1024));
      SparkCCL.allReduce(small, ReduceOp.SUM).count();
      small.treeReduce(AllReduceJob::add, 2);

      // SparkCCL leaves the result on the executors (where training uses it): timed to there.
      long t0 = System.nanoTime();
      JavaRDD<float[]> result = SparkCCL.allReduce(arrays, ReduceOp.SUM).cache();
      result.count();
      double ccl = (System.nanoTime() - t0) / 1e6;
      List<float[]> reduced = result.collect();

      // treeReduce's result is on the driver when it returns.
      long t1 = System.nanoTime();
      float[] tree = arrays.treeReduce(AllReduceJob::add, 2);
      double treeMs = (System.nanoTime() - t1) / 1e6;

      boolean correct = check(reduced, tree, n);
      System.out.printf(
          Locale.ROOT,
          "RESULT job=allreduce partitions=%d elements=%d correct=%s sparkccl_ms=%.1f"
              + " treereduce_ms=%.1f speedup=%.2f%n",
          partitions,
          n,
          correct,
          ccl,
          treeMs,
          treeMs / ccl);
    }
  }

  static float[] randomArray(int seed, int n) {
    SplittableRandom rnd = new SplittableRandom(seed * 7919L + 1);
    float[] a = new float[n];
    for (int i = 0; i < n; i++) {
      a[i] = (float) (0.5 + rnd.nextDouble());
    }
    return a;
  }

  static float[] add(float[] a, float[] b) {
    float[] c = new float[a.length];
    for (int i = 0; i < a.length; i++) {
      c[i] = a[i] + b[i];
    }
    return c;
  }

  /**
   * Every partition's result equals the double-precision sum of the inputs (rebuilt here from the
   * seeds, independently of both reductions) within float rounding, and so does treeReduce's.
   */
  private boolean check(List<float[]> reduced, float[] tree, int n) {
    if (reduced.size() != partitions) {
      return false;
    }
    double[] ref = new double[n];
    for (int p = 0; p < partitions; p++) {
      float[] a = randomArray(p, n);
      for (int i = 0; i < n; i++) {
        ref[i] += a[i];
      }
    }
    double tol = 2e-6 * (partitions + 1);
    for (float[] r : reduced) {
      for (int i = 0; i < n; i++) {
        if (Math.abs(r[i] - ref[i]) > tol * ref[i] || Math.abs(tree[i] - ref[i]) > tol * ref[i]) {
          return false;
        }
      }
    }
    return true;
  }
}
