package org.sparkccl.ml.train;

import java.util.List;

/**
 * The statistics MLlib's summarizer job computes before training (count, weight sum, weighted means
 * and unbiased weighted standard deviations, the label histogram or the label's mean and
 * deviation), gathered by one all-reduce instead of a job.
 *
 * <p>Each rank contributes its weighted sums and {@code M2 + W mean^2} around its own mean, so the
 * only cancellation left is between ranks' means, not across the raw squares.
 */
final class Summary {
  /** Rows with a positive weight, as MLlib counts them. */
  public final long count;

  public final double weightSum;
  public final double[] mean;
  public final double[] std;

  /** Weighted count per class; {@code null} for regression. */
  public final double[] histogram;

  public final double labelMean;
  public final double labelStd;

  private Summary(
      long count,
      double weightSum,
      double[] mean,
      double[] std,
      double[] histogram,
      double labelMean,
      double labelStd) {
    this.count = count;
    this.weightSum = weightSum;
    this.mean = mean;
    this.std = std;
    this.histogram = histogram;
    this.labelMean = labelMean;
    this.labelStd = labelStd;
  }

  /** Length of the vector {@link #local} fills. */
  public static int length(int numFeatures, int numClasses) {
    return 3 + labelSlots(numClasses) + 2 * numFeatures;
  }

  private static int labelSlots(int numClasses) {
    return numClasses > 0 ? numClasses : 2;
  }

  /**
   * This rank's contribution.
   *
   * @param numClasses classes of a classification, or 0 for a regression
   */
  public static double[] local(List<Block> blocks, int numFeatures, int numClasses) {
    double[] out = new double[length(numFeatures, numClasses)];
    int lab = 3;
    int sum = lab + labelSlots(numClasses);
    int sq = sum + numFeatures;
    double w = 0;
    double labelSum = 0;
    for (Block b : blocks) {
      for (int i = 0; i < b.rows; i++) {
        double wi = b.weights[i];
        if (wi == 0.0) {
          continue;
        }
        out[0] += 1;
        w += wi;
        out[2] += wi * wi;
        if (numClasses > 0) {
          out[lab + (int) b.labels[i]] += wi;
        } else {
          labelSum += wi * b.labels[i];
        }
        int base = i * numFeatures;
        for (int j = 0; j < numFeatures; j++) {
          out[sum + j] += wi * b.features[base + j];
        }
      }
    }
    out[1] = w;
    if (w == 0.0) {
      return out;
    }
    double labelMean = labelSum / w;
    double labelM2 = 0;
    double[] mean = new double[numFeatures];
    for (int j = 0; j < numFeatures; j++) {
      mean[j] = out[sum + j] / w;
    }
    for (Block b : blocks) {
      for (int i = 0; i < b.rows; i++) {
        double wi = b.weights[i];
        if (wi == 0.0) {
          continue;
        }
        double dy = b.labels[i] - labelMean;
        labelM2 += wi * dy * dy;
        int base = i * numFeatures;
        for (int j = 0; j < numFeatures; j++) {
          double d = b.features[base + j] - mean[j];
          out[sq + j] += wi * d * d;
        }
      }
    }
    for (int j = 0; j < numFeatures; j++) {
      out[sq + j] += w * mean[j] * mean[j];
    }
    if (numClasses == 0) {
      out[lab] = labelSum;
      out[lab + 1] = labelM2 + w * labelMean * labelMean;
    }
    return out;
  }

  /** The statistics of all ranks, from the all-reduced sum of their {@link #local} vectors. */
  public static Summary of(double[] reduced, int numFeatures, int numClasses) {
    int lab = 3;
    int sum = lab + labelSlots(numClasses);
    int sq = sum + numFeatures;
    double w = reduced[1];
    double w2 = reduced[2];
    double[] mean = new double[numFeatures];
    double[] std = new double[numFeatures];
    for (int j = 0; j < numFeatures; j++) {
      mean[j] = reduced[sum + j] / w;
      std[j] = Math.sqrt(variance(reduced[sq + j], mean[j], w, w2));
    }
    double[] histogram = null;
    double labelMean = Double.NaN;
    double labelStd = Double.NaN;
    if (numClasses > 0) {
      histogram = java.util.Arrays.copyOfRange(reduced, lab, lab + numClasses);
    } else {
      labelMean = reduced[lab] / w;
      labelStd = Math.sqrt(variance(reduced[lab + 1], labelMean, w, w2));
    }
    return new Summary((long) reduced[0], w, mean, std, histogram, labelMean, labelStd);
  }

  /** The unbiased weighted variance, as MLlib's summarizer defines it. */
  private static double variance(double sumSquares, double mean, double w, double w2) {
    double denominator = w - w2 / w;
    if (!(denominator > 0.0)) {
      return 0.0;
    }
    return Math.max(0.0, (sumSquares - w * mean * mean) / denominator);
  }
}
