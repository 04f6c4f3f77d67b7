package org.sparkccl.ml.classification;

import java.io.Serializable;
import org.apache.spark.ml.linalg.DenseVector;
import org.apache.spark.ml.linalg.SparseVector;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.ml.linalg.Vectors;

/**
 * A logistic model's arithmetic, shipped to the tasks of {@code transform}: margins, MLlib's raw
 * predictions ({@code [-m, m]} for binomial), probabilities and thresholded predictions.
 */
final class LogisticScorer implements Serializable {
  private final int sets;
  private final int numFeatures;
  private final double[] coefficients; // row-major sets x numFeatures
  private final double[] intercepts;
  private final boolean multinomial;
  private final double threshold;
  private final double[] thresholds; // null when unset

  LogisticScorer(
      int sets,
      int numFeatures,
      double[] coefficients,
      double[] intercepts,
      boolean multinomial,
      double threshold,
      double[] thresholds) {
    this.sets = sets;
    this.numFeatures = numFeatures;
    this.coefficients = coefficients;
    this.intercepts = intercepts;
    this.multinomial = multinomial;
    this.threshold = threshold;
    this.thresholds = thresholds;
  }

  private double margin(Vector features, int set) {
    double m = intercepts[set];
    int base = set * numFeatures;
    if (features instanceof SparseVector sparse) {
      int[] idx = sparse.indices();
      double[] values = sparse.values();
      for (int k = 0; k < idx.length; k++) {
        m += coefficients[base + idx[k]] * values[k];
      }
    } else {
      double[] values = ((DenseVector) features).values();
      for (int j = 0; j < numFeatures; j++) {
        m += coefficients[base + j] * values[j];
      }
    }
    return m;
  }

  Vector raw(Vector features) {
    if (!multinomial) {
      double m = margin(features, 0);
      return Vectors.dense(-m, m);
    }
    double[] margins = new double[sets];
    for (int k = 0; k < sets; k++) {
      margins[k] = margin(features, k);
    }
    return Vectors.dense(margins);
  }

  Vector probability(Vector raw) {
    double[] p = raw.toArray().clone();
    if (multinomial) {
      softmax(p);
    } else {
      p[0] = 1.0 / (1.0 + Math.exp(-p[0]));
      p[1] = 1.0 - p[0];
    }
    return Vectors.dense(p);
  }

  double prediction(Vector probability) {
    double[] p = probability.toArray();
    if (thresholds != null) {
      int best = 0;
      double bestScore = Double.NEGATIVE_INFINITY;
      for (int k = 0; k < p.length; k++) {
        double score = thresholds[k] == 0.0 ? Double.POSITIVE_INFINITY : p[k] / thresholds[k];
        if (score > bestScore) {
          best = k;
          bestScore = score;
        }
      }
      return best;
    }
    if (!multinomial) {
      return p[1] > threshold ? 1.0 : 0.0;
    }
    int best = 0;
    for (int k = 1; k < p.length; k++) {
      if (p[k] > p[best]) {
        best = k;
      }
    }
    return best;
  }

  private static void softmax(double[] values) {
    double max = Double.NEGATIVE_INFINITY;
    for (double v : values) {
      max = Math.max(max, v);
    }
    double sum = 0.0;
    for (int k = 0; k < values.length; k++) {
      values[k] = Math.exp(values[k] - max);
      sum += values[k];
    }
    for (int k = 0; k < values.length; k++) {
      values[k] /= sum;
    }
  }
}
