package org.sparkccl.ml.train;

import java.util.Arrays;
import java.util.List;

/**
 * Half squared error on the standardized label {@code y / std(y)}, as MLlib's l-bfgs solver
 * computes it: coefficients {@code [w_0 .. w_{d-1}]} only; with an intercept the features and the
 * label are centered virtually and the intercept is solved in closed form afterwards.
 */
final class LeastSquaresKernel implements LossKernel {
  private final int numFeatures;
  private final boolean fitIntercept;
  private final double[] scaledMean;
  private final double[] inverseStd;
  private final double labelMean;
  private final double labelStd;

  LeastSquaresKernel(
      int numFeatures,
      boolean fitIntercept,
      double[] scaledMean,
      double[] inverseStd,
      double labelMean,
      double labelStd) {
    this.numFeatures = numFeatures;
    this.fitIntercept = fitIntercept;
    this.scaledMean = scaledMean;
    this.inverseStd = inverseStd;
    this.labelMean = labelMean;
    this.labelStd = labelStd;
  }

  @Override
  public int dimension() {
    return numFeatures;
  }

  @Override
  public double addLossAndGradient(List<Block> blocks, double[] coef, double[] grad) {
    double[] effective = new double[numFeatures];
    for (int j = 0; j < numFeatures; j++) {
      effective[j] = inverseStd[j] != 0 ? coef[j] : 0.0;
    }
    double offset =
        fitIntercept
            ? labelMean / labelStd - SPARK_BLAS.ddot(numFeatures, coef, 1, scaledMean, 1)
            : 0.0;
    double loss = 0.0;
    for (Block b : blocks) {
      if (b.allWeightsZero()) {
        continue;
      }
      double[] diff = new double[b.rows];
      Arrays.fill(diff, offset);
      SPARK_BLAS.daxpy(b.rows, -1.0 / labelStd, b.labels, 1, diff, 1);
      SPARK_BLAS.dgemv(
          "T", numFeatures, b.rows, 1.0, b.features, numFeatures, effective, 1, 1.0, diff, 1);
      for (int i = 0; i < b.rows; i++) {
        double w = b.weights[i];
        loss += w * diff[i] * diff[i] / 2;
        diff[i] *= w;
      }
      SPARK_BLAS.dgemv(
          "N", numFeatures, b.rows, 1.0, b.features, numFeatures, diff, 1, 1.0, grad, 1);
    }
    return loss;
  }
}
