package org.sparkccl.ml;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Random datasets for the estimator tests: Gaussian features with their own means and scales (so
 * standardization matters), labels drawn from a random linear or logistic model, weights in [0.5,
 * 2).
 */
public final class TestData {
  private static final StructType SCHEMA =
      new StructType()
          .add("label", DataTypes.DoubleType)
          .add("weight", DataTypes.DoubleType)
          .add("features", SQLDataTypes.VectorType());

  private TestData() {}

  /** A local Spark for one test class; stop it in {@code @AfterAll}. */
  public static SparkSession spark(int cores, String app) {
    return SparkSession.builder()
        .master("local[" + cores + "]")
        .appName(app)
        .config("spark.ui.enabled", "false")
        .config("spark.plugins", "org.sparkccl.spark.SparkCCLPlugin")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.ccl.timeout", "60s")
        .getOrCreate();
  }

  /**
   * Rows for classification into {@code classes} classes (softmax of random margins), in {@code
   * partitions} partitions, cached.
   */
  public static Dataset<Row> classification(
      SparkSession spark, int rows, int features, int classes, int partitions, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    double[][] w = new double[classes][features];
    for (double[] wk : w) {
      for (int j = 0; j < features; j++) {
        wk[j] = rnd.nextGaussian() * 0.7;
      }
    }
    double[] mean = new double[features];
    double[] scale = new double[features];
    for (int j = 0; j < features; j++) {
      mean[j] = rnd.nextGaussian();
      scale[j] = 0.5 + 2 * rnd.nextDouble();
    }
    List<Row> out = new ArrayList<>(rows);
    double[] p = new double[classes];
    for (int i = 0; i < rows; i++) {
      double[] x = new double[features];
      for (int j = 0; j < features; j++) {
        x[j] = mean[j] + scale[j] * rnd.nextGaussian();
      }
      double max = Double.NEGATIVE_INFINITY;
      for (int k = 0; k < classes; k++) {
        double m = 0;
        for (int j = 0; j < features; j++) {
          m += w[k][j] * (x[j] - mean[j]) / scale[j];
        }
        p[k] = m;
        max = Math.max(max, m);
      }
      double sum = 0;
      for (int k = 0; k < classes; k++) {
        p[k] = Math.exp(p[k] - max);
        sum += p[k];
      }
      double u = rnd.nextDouble() * sum;
      int label = 0;
      while (label < classes - 1 && (u -= p[label]) > 0) {
        label++;
      }
      out.add(RowFactory.create((double) label, 0.5 + 1.5 * rnd.nextDouble(), Vectors.dense(x)));
    }
    return spark.createDataFrame(out, SCHEMA).repartition(partitions).cache();
  }

  /** Rows for regression: a random linear model plus Gaussian noise. */
  public static Dataset<Row> regression(
      SparkSession spark, int rows, int features, int partitions, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    double[] w = new double[features];
    double[] mean = new double[features];
    for (int j = 0; j < features; j++) {
      w[j] = rnd.nextGaussian();
      mean[j] = rnd.nextGaussian() * 2;
    }
    List<Row> out = new ArrayList<>(rows);
    for (int i = 0; i < rows; i++) {
      double[] x = new double[features];
      double y = 3.0;
      for (int j = 0; j < features; j++) {
        x[j] = mean[j] + (1 + j % 3) * rnd.nextGaussian();
        y += w[j] * x[j];
      }
      y += rnd.nextGaussian();
      out.add(RowFactory.create(y, 0.5 + 1.5 * rnd.nextDouble(), Vectors.dense(x)));
    }
    return spark.createDataFrame(out, SCHEMA).repartition(partitions).cache();
  }

  /** {@code ||a - b|| / ||b||}. */
  public static double relativeDistance(double[] a, double[] b) {
    double diff = 0;
    double norm = 0;
    for (int i = 0; i < a.length; i++) {
      diff += (a[i] - b[i]) * (a[i] - b[i]);
      norm += b[i] * b[i];
    }
    return Math.sqrt(diff) / Math.sqrt(norm);
  }
}
