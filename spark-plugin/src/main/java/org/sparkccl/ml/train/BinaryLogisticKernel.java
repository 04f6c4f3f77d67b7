package org.sparkccl.ml.train;

import java.util.Arrays;
import java.util.List;

/**
 * Binary logistic loss, as MLlib computes it: coefficients {@code [w_0 .. w_{d-1}, b]}; with {@code
 * fitWithMean} the features are centered virtually (the margin subtracts {@code w . scaledMean}),
 * which is what makes the intercept cheap to fit.
 */
final class BinaryLogisticKernel implements LossKernel {
  private final int numFeatures;
  private final boolean fitIntercept;
  private final boolean fitWithMean;
  private final double[] scaledMean;

  BinaryLogisticKernel(int numFeatures, boolean fitIntercept, double[] scaledMean) {
    this.numFeatures = numFeatures;
    this.fitIntercept = fitIntercept;
    this.fitWithMean = fitIntercept;
    this.scaledMean = scaledMean;
  }

  @Override
  public int dimension() {
    return fitIntercept ? numFeatures + 1 : numFeatures;
  }

  @Override
  public double addLossAndGradient(List<Block> blocks, double[] coef, double[] grad) {
    double offset = 0.0;
    if (fitIntercept) {
      offset = coef[numFeatures];
      if (fitWithMean) {
        offset -= SPARK_BLAS.ddot(numFeatures, coef, 1, scaledMean, 1);
      }
    }
    double loss = 0.0;
    double multiplierSum = 0.0;
    for (Block b : blocks) {
      if (b.allWeightsZero()) {
        continue;
      }
      double[] m = new double[b.rows];
      Arrays.fill(m, offset);
      SPARK_BLAS.dgemv("T", numFeatures, b.rows, 1.0, b.features, numFeatures, coef, 1, 1.0, m, 1);
      for (int i = 0; i < b.rows; i++) {
        double w = b.weights[i];
        if (w > 0) {
          double margin = m[i];
          loss +=
              b.labels[i] > 0
                  ? w * LossKernel.log1pExp(-margin)
                  : w * (LossKernel.log1pExp(-margin) + margin);
          double multiplier = w * (1.0 / (1.0 + Math.exp(-margin)) - b.labels[i]);
          m[i] = multiplier;
          multiplierSum += multiplier;
        } else {
          m[i] = 0.0;
        }
      }
      SPARK_BLAS.dgemv("N", numFeatures, b.rows, 1.0, b.features, numFeatures, m, 1, 1.0, grad, 1);
    }
    if (fitWithMean) {
      SPARK_BLAS.daxpy(numFeatures, -multiplierSum, scaledMean, 1, grad, 1);
    }
    if (fitIntercept) {
      grad[numFeatures] += multiplierSum;
    }
    return loss;
  }
}
