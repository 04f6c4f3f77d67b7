package org.sparkccl.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.apache.spark.ml.classification.LogisticRegression;
import org.apache.spark.ml.classification.LogisticRegressionModel;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.sparkccl.ml.classification.CclLogisticRegression;
import org.sparkccl.ml.classification.CclLogisticRegressionModel;
import org.sparkccl.spark.SparkCCLPlugin;

/**
 * A CclLogisticRegression fit whose ranks live in two executor JVMs ({@code
 * local-cluster[2,2,1024]}, Spark home from {@code bin/spark-home}), against MLlib on the same
 * data. Runs after {@code package}, since the executors load the built jars.
 */
@DisplayName("CclLogisticRegression on a local cluster of executor JVMs")
@Timeout(600)
class MlLocalClusterIT {
  private static SparkSession spark;

  @BeforeAll
  static void startCluster() {
    String home = System.getenv("SPARK_HOME");
    if (home == null || !new File(home, "jars").isDirectory()) {
      String why =
          "SKIPPED: SPARK_HOME ("
              + home
              + ") is not a Spark home with jars/; bin/run-tests sets it"
              + " from pip's pyspark==4.2.0";
      System.out.println(why);
      Assumptions.abort(why);
    }
    spark =
        SparkSession.builder()
            .master("local-cluster[2,2,1024]")
            .appName("MlLocalClusterIT")
            .config("spark.jars", String.join(",", shippedJars()))
            .config("spark.plugins", SparkCCLPlugin.class.getName())
            .config("spark.ui.enabled", "false")
            .config("spark.ccl.timeout", "60s")
            .getOrCreate();
  }

  @AfterAll
  static void stopCluster() throws IOException {
    if (spark != null) {
      String app = spark.sparkContext().applicationId();
      spark.stop();
      // local-cluster workers always work in SPARK_HOME/work: leave the Spark home as it was
      Path work = Path.of(System.getenv("SPARK_HOME"), "work", app);
      if (Files.exists(work)) {
        try (var paths = Files.walk(work)) {
          paths.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        }
      }
    }
  }

  /** This module's jars (main and tests) and its runtime dependencies, from target/. */
  private static List<String> shippedJars() {
    File target = new File("target");
    List<String> jars = new ArrayList<>();
    for (File dir : List.of(target, new File(target, "lib"))) {
      File[] found = dir.listFiles((d, n) -> n.endsWith(".jar"));
      for (File f : found == null ? new File[0] : found) {
        jars.add(f.getAbsolutePath());
      }
    }
    assertTrue(jars.size() >= 4, "built jars in target/ and target/lib: " + jars);
    return jars;
  }

  @Test
  void aFitAcrossExecutorProcessesMatchesMllib() {
    List<Row> rows = new ArrayList<>();
    for (int p = 0; p < 4; p++) {
      LogisticRegressionJob.partitionRows(p, 1500, 20, 2).forEachRemaining(rows::add);
    }
    StructType schema =
        new StructType()
            .add("label", DataTypes.DoubleType)
            .add("features", SQLDataTypes.VectorType());
    Dataset<Row> data = spark.createDataFrame(rows, schema).repartition(4).cache();
    long t0 = System.nanoTime();
    // Five iterations: both estimators take the same path, so they must agree after any number
    // of steps, and each of MLlib's steps is a Spark job across the executors (seconds here).
    LogisticRegressionModel want =
        new LogisticRegression().setRegParam(0.01).setMaxIter(5).fit(data);
    long t1 = System.nanoTime();
    CclLogisticRegressionModel got =
        new CclLogisticRegression().setRegParam(0.01).setMaxIter(5).setNumWorkers(4).fit(data);
    long t2 = System.nanoTime();
    System.out.printf(
        "local-cluster fit: MLlib %.1f s, SparkCCL %.1f s (%s)%n",
        (t1 - t0) / 1e9, (t2 - t1) / 1e9, got.summary().timings());
    double[] a = got.coefficientMatrix().toArray();
    double[] b = want.coefficientMatrix().toArray();
    double diff = 0;
    double norm = 0;
    for (int i = 0; i < a.length; i++) {
      diff += (a[i] - b[i]) * (a[i] - b[i]);
      norm += b[i] * b[i];
    }
    assertTrue(
        Math.sqrt(diff) <= 1e-4 * Math.sqrt(norm), "relative distance " + Math.sqrt(diff / norm));
    assertEquals(want.intercept(), got.intercept(), 1e-4);
    double[] history = want.summary().objectiveHistory();
    double[] mine = got.summary().objectiveHistory();
    assertEquals(
        history[history.length - 1], mine[mine.length - 1], 1e-6 * history[history.length - 1]);
  }
}
