package org.sparkccl.ml.train;

import java.util.Arrays;

/**
 * Logistic regression as MLlib's {@code LogisticRegression} sets it up: coefficients trained in the
 * standardized space, column-major ({@code index = feature * numSets + set}), intercepts after
 * them, started from the label distribution.
 */
final class LogisticProblem implements Problem {
  private final TrainSpec spec;
  private final int d;
  private final int sets;
  private final boolean multinomial;

  LogisticProblem(TrainSpec spec) {
    this.spec = spec;
    this.d = spec.numFeatures();
    this.sets = spec.numSets();
    this.multinomial = spec.loss() == TrainSpec.Loss.MULTINOMIAL;
  }

  @Override
  public Fit trivial(Summary s) {
    int nonZero = 0;
    int argmax = 0;
    for (int k = 0; k < s.histogram.length; k++) {
      nonZero += s.histogram[k] != 0.0 ? 1 : 0;
      argmax = s.histogram[k] > s.histogram[argmax] ? k : argmax;
    }
    if (!spec.fitIntercept() || nonZero != 1) {
      return null;
    }
    double[] intercepts = new double[sets];
    if (multinomial) {
      intercepts[argmax] = Double.POSITIVE_INFINITY;
    } else {
      intercepts[0] = spec.numClasses() == 2 ? Double.POSITIVE_INFINITY : Double.NEGATIVE_INFINITY;
    }
    return new Fit(sets, d, new double[sets * d], intercepts, new double[] {0.0}, Timings.NONE);
  }

  @Override
  public LossKernel kernel(Summary s, double[] inverseStd, double[] scaledMean) {
    return multinomial
        ? new MultinomialLogisticKernel(d, sets, spec.fitIntercept(), scaledMean)
        : new BinaryLogisticKernel(d, spec.fitIntercept(), scaledMean);
  }

  @Override
  public L2Penalty l2(Summary s) {
    double reg = (1.0 - spec.elasticNetParam()) * spec.regParam();
    return new L2Penalty(reg, sets * d, spec.standardization() ? null : inverseSquares(s));
  }

  private double[] inverseSquares(Summary s) {
    double[] scale = new double[sets * d];
    for (int i = 0; i < scale.length; i++) {
      double std = s.std[i / sets];
      scale[i] = std != 0.0 ? 1.0 / (std * std) : 0.0;
    }
    return scale;
  }

  @Override
  public double[] l1(Summary s) {
    double reg = spec.elasticNetParam() * spec.regParam();
    if (spec.elasticNetParam() == 0.0 || spec.regParam() == 0.0) {
      return null;
    }
    double[] l1 = new double[dimension()];
    for (int i = 0; i < sets * d; i++) { // intercepts stay unpenalized
      double std = s.std[i / sets];
      l1[i] = spec.standardization() ? reg : (std != 0.0 ? reg / std : 0.0);
    }
    return l1;
  }

  private int dimension() {
    return sets * (spec.fitIntercept() ? d + 1 : d);
  }

  @Override
  public double[] start(Summary s) {
    double[] x = new double[dimension()];
    if (!spec.fitIntercept()) {
      return x;
    }
    if (multinomial) {
      // intercepts that reproduce the label distribution, centered (log1p smooths empty classes)
      double mean = 0.0;
      for (int k = 0; k < sets; k++) {
        x[sets * d + k] = Math.log1p(s.histogram[k]);
        mean += x[sets * d + k];
      }
      mean /= sets;
      for (int k = 0; k < sets; k++) {
        x[sets * d + k] -= mean;
      }
    } else {
      x[d] = Math.log(s.histogram[1] / s.histogram[0]);
    }
    return x;
  }

  @Override
  public Fit finish(double[] solution, double[] history, Summary s, double[] scaledMean) {
    double[] x = solution.clone();
    if (spec.fitIntercept()) { // undo the virtual centering
      for (int k = 0; k < sets; k++) {
        double shift = 0.0;
        for (int j = 0; j < d; j++) {
          shift += x[j * sets + k] * scaledMean[j];
        }
        x[sets * d + k] -= shift;
      }
    }
    double[] coefficients = new double[sets * d];
    for (int k = 0; k < sets; k++) {
      for (int j = 0; j < d; j++) {
        coefficients[k * d + j] = s.std[j] != 0.0 ? x[j * sets + k] / s.std[j] : 0.0;
      }
    }
    double[] intercepts =
        spec.fitIntercept() ? Arrays.copyOfRange(x, sets * d, sets * d + sets) : new double[sets];
    if (multinomial && spec.regParam() == 0.0) {
      centerColumns(coefficients); // unregularized softmax is defined up to a shift per feature
    }
    if (multinomial && spec.fitIntercept()) {
      double mean = Arrays.stream(intercepts).sum() / sets;
      for (int k = 0; k < sets; k++) {
        intercepts[k] -= mean;
      }
    }
    return new Fit(sets, d, coefficients, intercepts, history, Timings.NONE);
  }

  private void centerColumns(double[] coefficients) {
    for (int j = 0; j < d; j++) {
      double mean = 0.0;
      for (int k = 0; k < sets; k++) {
        mean += coefficients[k * d + j];
      }
      mean /= sets;
      for (int k = 0; k < sets; k++) {
        coefficients[k * d + j] -= mean;
      }
    }
  }
}
