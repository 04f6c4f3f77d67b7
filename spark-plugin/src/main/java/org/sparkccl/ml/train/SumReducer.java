package org.sparkccl.ml.train;

/**
 * Sums a vector over all ranks, in place. Every rank must get the same bits back: the ranks each
 * run the optimizer on the result, and if their line searches saw different numbers they would take
 * different steps and stop waiting for each other.
 */
interface SumReducer {
  void sum(double[] values);

  int rank();

  int nRanks();
}
