package org.sparkccl.ml.train;

/**
 * {@code 0.5 * reg * sum_j scale_j * c_j^2} over the first {@code count} coefficients (the
 * intercepts are never penalized). {@code scale_j} is 1 with standardization, else {@code 1 /
 * std_j^2} (0 for constant features), which undoes the implicit standardization as MLlib does.
 */
final class L2Penalty {
  private final double reg;
  private final int count;
  private final double[] scale;

  /**
   * @param scale per-coefficient factors, or {@code null} for all 1
   */
  L2Penalty(double reg, int count, double[] scale) {
    this.reg = reg;
    this.count = count;
    this.scale = scale;
  }

  /** Adds the penalty's gradient into {@code grad}; returns the penalty. */
  double add(double[] coef, double[] grad) {
    if (reg == 0.0) {
      return 0.0;
    }
    double sum = 0.0;
    for (int j = 0; j < count; j++) {
      double s = scale == null ? 1.0 : scale[j];
      double c = coef[j] * s;
      sum += coef[j] * c;
      grad[j] += reg * c;
    }
    return 0.5 * sum * reg;
  }
}
