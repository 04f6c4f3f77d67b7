package org.sparkccl.examples;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.ml.classification.LogisticRegression;
import org.apache.spark.ml.classification.LogisticRegressionModel;
import org.apache.spark.ml.evaluation.BinaryClassificationEvaluator;
import org.apache.spark.ml.evaluation.MulticlassClassificationEvaluator;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.sparkccl.ml.classification.CclLogisticRegression;
import org.sparkccl.ml.classification.CclLogisticRegressionModel;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * MLlib's {@code LogisticRegression} and SparkCCL's {@code CclLogisticRegression} on the same dense
 * random dataset (made on the executors, cached) with the same settings; each estimator is fitted
 * once to warm up (on a tenth of the rows), then {@code --repeats} times, and the medians are
 * compared. The last line is the result contract:
 *
 * <pre>
 * RESULT job=logreg rows=N features=F classes=K partitions=P iterations_ccl=I iterations_mllib=J
 *   objective_rel_diff=D auc_ccl=A auc_mllib=B sparkccl_s=X mllib_s=Y speedup=Z
 * </pre>
 *
 * (one line; for {@code K > 2} the {@code auc_*} fields hold the accuracy). Submit with {@code
 * bin/sparkccl-example logreg [--rows N] [--features F] [--classes K] [--partitions P]}.
 */
@Command(name = "logreg", mixinStandardHelpOptions = true)
public final class LogisticRegressionJob implements Runnable {
  @Option(names = "--rows", description = "rows (default ${DEFAULT-VALUE})")
  int rows = 100_000;

  @Option(names = "--features", description = "dense features (default ${DEFAULT-VALUE})")
  int features = 1000;

  @Option(names = "--classes", description = "classes (default ${DEFAULT-VALUE})")
  int classes = 2;

  @Option(
      names = "--partitions",
      description = "partitions = SparkCCL workers (default ${DEFAULT-VALUE})")
  int partitions = 4;

  @Option(names = "--reg", description = "regParam (default ${DEFAULT-VALUE})")
  double regParam = 0.01;

  @Option(names = "--elastic-net", description = "elasticNetParam (default ${DEFAULT-VALUE})")
  double elasticNet = 0.0;

  @Option(names = "--max-iter", description = "maxIter (default ${DEFAULT-VALUE})")
  int maxIter = 100;

  @Option(names = "--tol", description = "tol (default ${DEFAULT-VALUE})")
  double tol = 1e-6;

  @Option(
      names = "--repeats",
      description = "timed fits of each, after a warm-up (default ${DEFAULT-VALUE})")
  int repeats = 1;

  public static void main(String[] args) {
    System.exit(new CommandLine(new LogisticRegressionJob()).execute(args));
  }

  /** Counts Spark jobs, which for MLlib is about one per loss evaluation. */
  private static final class JobCounter extends SparkListener {
    final AtomicInteger jobs = new AtomicInteger();

    @Override
    public void onJobStart(SparkListenerJobStart start) {
      jobs.incrementAndGet();
    }
  }

  @Override
  public void run() {
    SparkSession.Builder builder = SparkSession.builder().appName("SparkCCL LogisticRegressionJob");
    if (System.getProperty("spark.master") == null) {
      builder.master("local[" + partitions + "]");
    }
    SparkSession spark = builder.getOrCreate();
    try {
      JobCounter counter = new JobCounter();
      spark.sparkContext().addSparkListener(counter);
      Dataset<Row> data = dataset(spark).cache();
      long n = data.count();
      System.out.printf(
          Locale.ROOT,
          "# %d rows x %d features, %d classes, %d partitions, BLAS %s%n",
          n,
          features,
          classes,
          partitions,
          dev.ludovic.netlib.blas.BLAS.getInstance().getClass().getSimpleName());

      LogisticRegression mllib = configure(new LogisticRegression());
      CclLogisticRegression ccl =
          new CclLogisticRegression()
              .setRegParam(regParam)
              .setElasticNetParam(elasticNet)
              .setMaxIter(maxIter)
              .setTol(tol)
              .setStandardization(true)
              .setNumWorkers(partitions);
      Dataset<Row> tenth = data.sample(0.1, 1).cache();
      mllib.fit(tenth);
      ccl.fit(tenth);
      tenth.unpersist();

      double[] mllibSeconds = new double[repeats];
      double[] cclSeconds = new double[repeats];
      LogisticRegressionModel mllibModel = null;
      CclLogisticRegressionModel cclModel = null;
      int mllibJobs = 0;
      for (int r = 0; r < repeats; r++) {
        int jobs0 = counter.jobs.get();
        long t0 = System.nanoTime();
        mllibModel = mllib.fit(data);
        mllibSeconds[r] = (System.nanoTime() - t0) / 1e9;
        mllibJobs = counter.jobs.get() - jobs0;
        long t1 = System.nanoTime();
        cclModel = ccl.fit(data);
        cclSeconds[r] = (System.nanoTime() - t1) / 1e9;
        System.out.printf(
            Locale.ROOT,
            "# fit %d: mllib %.2f s (%d jobs), sparkccl %.2f s (%s)%n",
            r + 1,
            mllibSeconds[r],
            mllibJobs,
            cclSeconds[r],
            cclModel.summary().timings());
      }
      double[] mllibHistory = mllibModel.summary().objectiveHistory();
      double[] cclHistory = cclModel.summary().objectiveHistory();
      double mllibLoss = mllibHistory[mllibHistory.length - 1];
      double cclLoss = cclHistory[cclHistory.length - 1];
      double mllibS = median(mllibSeconds);
      double cclS = median(cclSeconds);
      int cclEvals = cclModel.summary().lossEvaluations();
      System.out.printf(
          Locale.ROOT,
          "# per loss evaluation: mllib %.1f ms (%d jobs in the fit), sparkccl %.1f ms"
              + " (%d evaluations; in-task computation %.1f ms)%n",
          1000 * mllibS / Math.max(1, mllibJobs),
          mllibJobs,
          cclModel.summary().timings().optimizeMs() / Math.max(1, cclEvals),
          cclEvals,
          cclModel.summary().timings().computeMs() / Math.max(1, cclEvals));
      System.out.printf(
          Locale.ROOT,
          "RESULT job=logreg rows=%d features=%d classes=%d partitions=%d iterations_ccl=%d"
              + " iterations_mllib=%d objective_rel_diff=%.3g auc_ccl=%.5f auc_mllib=%.5f"
              + " sparkccl_s=%.2f mllib_s=%.2f speedup=%.2f%n",
          n,
          features,
          classes,
          partitions,
          cclModel.summary().totalIterations(),
          mllibModel.summary().totalIterations(),
          Math.abs(cclLoss - mllibLoss) / Math.abs(mllibLoss),
          quality(cclModel.transform(data)),
          quality(mllibModel.transform(data)),
          cclS,
          mllibS,
          mllibS / cclS);
    } finally {
      spark.stop();
    }
  }

  private LogisticRegression configure(LogisticRegression lr) {
    return lr.setRegParam(regParam)
        .setElasticNetParam(elasticNet)
        .setMaxIter(maxIter)
        .setTol(tol)
        .setStandardization(true);
  }

  /** AUC for two classes, accuracy for more. */
  private double quality(Dataset<Row> scored) {
    return classes == 2
        ? new BinaryClassificationEvaluator().evaluate(scored)
        : new MulticlassClassificationEvaluator().setMetricName("accuracy").evaluate(scored);
  }

  private static double median(double[] values) {
    double[] sorted = values.clone();
    Arrays.sort(sorted);
    return sorted[sorted.length / 2];
  }

  /** Rows made on the executors, each partition from its own seed: nothing from the driver. */
  private Dataset<Row> dataset(SparkSession spark) {
    List<Integer> seeds = new ArrayList<>();
    for (int p = 0; p < partitions; p++) {
      seeds.add(p);
    }
    int f = features;
    int k = classes;
    int perPartition = rows / partitions;
    JavaRDD<Row> rdd =
        JavaSparkContext.fromSparkContext(spark.sparkContext())
            .parallelize(seeds, partitions)
            .mapPartitions(it -> partitionRows(it.next(), perPartition, f, k));
    StructType schema =
        new StructType()
            .add("label", DataTypes.DoubleType)
            .add("features", SQLDataTypes.VectorType());
    return spark.createDataFrame(rdd, schema);
  }

  /**
   * Gaussian features; labels drawn from a softmax (sigmoid for two classes) of a fixed random
   * linear model, scaled so that the classes overlap.
   */
  static Iterator<Row> partitionRows(int seed, int n, int features, int classes) {
    SplittableRandom model = new SplittableRandom(12345);
    int sets = classes == 2 ? 1 : classes;
    double[][] w = new double[sets][features];
    for (double[] wk : w) {
      for (int j = 0; j < features; j++) {
        wk[j] = model.nextGaussian() / Math.sqrt(features);
      }
    }
    SplittableRandom rnd = new SplittableRandom(seed * 7919L + 17);
    List<Row> out = new ArrayList<>(n);
    double[] p = new double[classes];
    for (int i = 0; i < n; i++) {
      double[] x = new double[features];
      for (int j = 0; j < features; j++) {
        x[j] = rnd.nextGaussian();
      }
      double label;
      if (classes == 2) {
        double m = 0;
        for (int j = 0; j < features; j++) {
          m += 2 * w[0][j] * x[j];
        }
        label = rnd.nextDouble() < 1 / (1 + Math.exp(-m)) ? 1 : 0;
      } else {
        double sum = 0;
        for (int c = 0; c < classes; c++) {
          double m = 0;
          for (int j = 0; j < features; j++) {
            m += 2 * w[c][j] * x[j];
          }
          p[c] = Math.exp(m);
          sum += p[c];
        }
        double u = rnd.nextDouble() * sum;
        int c = 0;
        while (c < classes - 1 && (u -= p[c]) > 0) {
          c++;
        }
        label = c;
      }
      out.add(RowFactory.create(label, Vectors.dense(x)));
    }
    return out.iterator();
  }
}
