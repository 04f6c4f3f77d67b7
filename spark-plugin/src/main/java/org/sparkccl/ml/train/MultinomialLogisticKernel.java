package org.sparkccl.ml.train;

import java.util.List;

/**
 * Multinomial (softmax) loss, as MLlib computes it: coefficients column-major {@code K x d} (index
 * {@code j * K + k}) followed by the {@code K} intercepts; features centered virtually when an
 * intercept is fitted.
 */
final class MultinomialLogisticKernel implements LossKernel {
  private final int numFeatures;
  private final int numClasses;
  private final boolean fitIntercept;
  private final double[] scaledMean;

  MultinomialLogisticKernel(
      int numFeatures, int numClasses, boolean fitIntercept, double[] scaledMean) {
    this.numFeatures = numFeatures;
    this.numClasses = numClasses;
    this.fitIntercept = fitIntercept;
    this.scaledMean = scaledMean;
  }

  @Override
  public int dimension() {
    return numClasses * (fitIntercept ? numFeatures + 1 : numFeatures);
  }

  @Override
  public double addLossAndGradient(List<Block> blocks, double[] coef, double[] grad) {
    int k = numClasses;
    int d = numFeatures;
    double[] offset = new double[k];
    if (fitIntercept) {
      System.arraycopy(coef, k * d, offset, 0, k);
      SPARK_BLAS.dgemv("N", k, d, -1.0, coef, k, scaledMean, 1, 1.0, offset, 1);
    }
    double loss = 0.0;
    double[] multiplierSum = new double[k];
    double[] probs = new double[k];
    for (Block b : blocks) {
      if (b.allWeightsZero()) {
        continue;
      }
      int n = b.rows;
      double[] m = new double[n * k]; // n x K, column-major: margins, then multipliers
      for (int c = 0; c < k; c++) {
        java.util.Arrays.fill(m, c * n, (c + 1) * n, offset[c]);
      }
      SPARK_BLAS.dgemm("T", "T", n, k, d, 1.0, b.features, d, coef, k, 1.0, m, n);
      for (int i = 0; i < n; i++) {
        double w = b.weights[i];
        if (w > 0) {
          for (int c = 0; c < k; c++) {
            probs[c] = m[c * n + i];
          }
          softmax(probs);
          int label = (int) b.labels[i];
          for (int c = 0; c < k; c++) {
            double multiplier = w * (probs[c] - (label == c ? 1.0 : 0.0));
            m[c * n + i] = multiplier;
            multiplierSum[c] += multiplier;
          }
          loss -= w * Math.log(probs[label]);
        } else {
          for (int c = 0; c < k; c++) {
            m[c * n + i] = 0.0;
          }
        }
      }
      SPARK_BLAS.dgemm("T", "T", k, d, n, 1.0, m, n, b.features, d, 1.0, grad, k);
    }
    if (fitIntercept) {
      SPARK_BLAS.dger(k, d, -1.0, multiplierSum, 1, scaledMean, 1, grad, k);
      for (int c = 0; c < k; c++) {
        grad[k * d + c] += multiplierSum[c];
      }
    }
    return loss;
  }

  /** In place, shifted by the maximum so that no exponential overflows. */
  static void softmax(double[] values) {
    double max = Double.NEGATIVE_INFINITY;
    for (double v : values) {
      max = Math.max(max, v);
    }
    double sum = 0.0;
    for (int c = 0; c < values.length; c++) {
      values[c] = Math.exp(values[c] - max);
      sum += values[c];
    }
    for (int c = 0; c < values.length; c++) {
      values[c] /= sum;
    }
  }
}
