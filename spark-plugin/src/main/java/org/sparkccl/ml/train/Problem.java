package org.sparkccl.ml.train;

/**
 * The parts of a fit that depend on the loss: MLlib's penalties, start point, trivial cases and the
 * way back from the standardized space. Every rank computes them from the same reduced summary, so
 * they agree without talking.
 */
interface Problem {
  /** A model that needs no training (a constant label), or {@code null}. */
  Fit trivial(Summary s);

  LossKernel kernel(Summary s, double[] inverseStd, double[] scaledMean);

  L2Penalty l2(Summary s);

  /** Per-coefficient L1 penalties (OWL-QN), or {@code null} for none (LBFGS). */
  double[] l1(Summary s);

  double[] start(Summary s);

  /** The model in the original space from the optimizer's solution. */
  Fit finish(double[] solution, double[] history, Summary s, double[] scaledMean);
}
