package org.sparkccl.ml.train;

/**
 * Rows of one partition packed for level-2/3 BLAS: {@code features} is row-major {@code rows x
 * numFeatures} (column-major {@code numFeatures x rows}, leading dimension {@code numFeatures}).
 */
final class Block {
  final int rows;
  final int numFeatures;
  final double[] features;
  final double[] labels;
  final double[] weights;

  Block(int rows, int numFeatures, double[] features, double[] labels, double[] weights) {
    this.rows = rows;
    this.numFeatures = numFeatures;
    this.features = features;
    this.labels = labels;
    this.weights = weights;
  }

  /** Multiplies every feature {@code j} by {@code scale[j]}, in place. */
  void scaleFeatures(double[] scale) {
    for (int i = 0; i < rows; i++) {
      int base = i * numFeatures;
      for (int j = 0; j < numFeatures; j++) {
        features[base + j] *= scale[j];
      }
    }
  }

  boolean allWeightsZero() {
    for (int i = 0; i < rows; i++) {
      if (weights[i] != 0.0) {
        return false;
      }
    }
    return true;
  }
}
