package org.sparkccl.ml.train;

/**
 * Least squares as MLlib's {@code LinearRegression} sets it up for its l-bfgs solver: features and
 * label standardized, the penalties divided by the label's deviation, the intercept solved in
 * closed form at the end.
 */
final class LeastSquaresProblem implements Problem {
  private final TrainSpec spec;
  private final int d;

  LeastSquaresProblem(TrainSpec spec) {
    this.spec = spec;
    this.d = spec.numFeatures();
  }

  @Override
  public Fit trivial(Summary s) {
    if (s.labelStd != 0.0) {
      return null;
    }
    if (spec.fitIntercept() || s.labelMean == 0.0) {
      return new Fit(
          1, d, new double[d], new double[] {s.labelMean}, new double[] {0.0}, Timings.NONE);
    }
    if (spec.regParam() != 0.0) {
      throw new InputRejected(
          "The standard deviation of the label is zero. Model cannot be regularized.");
    }
    return null;
  }

  /** The label's scale: its deviation, or its magnitude for a constant label. */
  private static double labelScale(Summary s) {
    return s.labelStd > 0 ? s.labelStd : Math.abs(s.labelMean);
  }

  private double effectiveReg(Summary s) {
    return spec.regParam() / labelScale(s);
  }

  @Override
  public LossKernel kernel(Summary s, double[] inverseStd, double[] scaledMean) {
    return new LeastSquaresKernel(
        d, spec.fitIntercept(), scaledMean, inverseStd, s.labelMean, labelScale(s));
  }

  @Override
  public L2Penalty l2(Summary s) {
    double reg = (1.0 - spec.elasticNetParam()) * effectiveReg(s);
    double[] scale = null;
    if (!spec.standardization()) {
      scale = new double[d];
      for (int j = 0; j < d; j++) {
        scale[j] = s.std[j] != 0.0 ? 1.0 / (s.std[j] * s.std[j]) : 0.0;
      }
    }
    return new L2Penalty(reg, d, scale);
  }

  @Override
  public double[] l1(Summary s) {
    double reg = effectiveReg(s);
    if (spec.elasticNetParam() == 0.0 || reg == 0.0) {
      return null;
    }
    double l1 = spec.elasticNetParam() * reg;
    double[] out = new double[d];
    for (int j = 0; j < d; j++) {
      out[j] = spec.standardization() ? l1 : (s.std[j] != 0.0 ? l1 / s.std[j] : 0.0);
    }
    return out;
  }

  @Override
  public double[] start(Summary s) {
    return new double[d];
  }

  @Override
  public Fit finish(double[] solution, double[] history, Summary s, double[] scaledMean) {
    double yStd = labelScale(s);
    double[] coefficients = new double[d];
    double dot = 0.0;
    for (int j = 0; j < d; j++) {
      coefficients[j] = s.std[j] != 0 ? solution[j] * yStd / s.std[j] : 0.0;
      dot += coefficients[j] * s.mean[j];
    }
    double intercept = spec.fitIntercept() ? s.labelMean - dot : 0.0;
    return new Fit(1, d, coefficients, new double[] {intercept}, history, Timings.NONE);
  }
}
