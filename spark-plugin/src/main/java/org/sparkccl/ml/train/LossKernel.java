package org.sparkccl.ml.train;

import dev.ludovic.netlib.blas.BLAS;
import java.util.List;

/**
 * One rank's share of a loss: the weighted loss sum over its blocks and the gradient of that sum,
 * in the standardized space the optimizer works in (features already multiplied by {@code 1 /
 * std}). Dividing by the weight sum and adding the penalties happen after the all-reduce.
 */
interface LossKernel {
  /** Spark's BLAS: native when a system BLAS loads, else its Java implementation. */
  BLAS SPARK_BLAS = BLAS.getInstance();

  /** Number of coefficients (with intercepts). */
  int dimension();

  /** Adds the gradient of the loss sum at {@code coef} into {@code grad}; returns the loss sum. */
  double addLossAndGradient(List<Block> blocks, double[] coef, double[] grad);

  /** {@code log(1 + exp(x))} without overflow. */
  static double log1pExp(double x) {
    return x > 0 ? x + Math.log1p(Math.exp(-x)) : Math.log1p(Math.exp(x));
  }
}
