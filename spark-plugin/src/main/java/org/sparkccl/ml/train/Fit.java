package org.sparkccl.ml.train;

/**
 * A trained model in the original feature space, with how it was reached.
 *
 * @param coefficients row-major {@code numSets x numFeatures}
 * @param intercepts one per coefficient set
 * @param objectiveHistory the objective at the start and after each iteration, as MLlib reports it
 *     <pre>{@code
 * Fit fit = BarrierTrainer.fit(rows, spec, 4);
 * double[] firstClass = Arrays.copyOf(fit.coefficients(), fit.numFeatures());
 * }</pre>
 */
public record Fit(
    int numSets,
    int numFeatures,
    double[] coefficients,
    double[] intercepts,
    double[] objectiveHistory,
    Timings timings) {

  /** Iterations the optimizer made (MLlib's {@code totalIterations}). */
  public int iterations() {
    return Math.max(0, objectiveHistory.length - 1);
  }

  Fit withTimings(Timings t) {
    return new Fit(numSets, numFeatures, coefficients, intercepts, objectiveHistory, t);
  }
}
