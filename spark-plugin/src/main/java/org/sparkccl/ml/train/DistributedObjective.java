package org.sparkccl.ml.train;

import java.util.Arrays;
import java.util.List;
import org.sparkccl.ml.optim.Objective;

/**
 * The loss every rank hands to its optimizer: the rank's share from its blocks, then one all-reduce
 * of {@code [gradient, loss, fingerprint]}, then MLlib's normalization by the weight sum and the L2
 * penalty.
 *
 * <p>The fingerprint is a hash of the point being evaluated. Ranks that hold the same point sum to
 * {@code nRanks * hash} exactly (small integers in doubles), so a rank whose optimizer drifted from
 * the others fails at once with a clear message instead of leaving the rest waiting.
 */
final class DistributedObjective implements Objective {
  private final List<Block> blocks;
  private final LossKernel kernel;
  private final SumReducer reducer;
  private final double weightSum;
  private final L2Penalty l2;
  private int evaluations;
  private long computeNanos;
  private long reduceNanos;

  DistributedObjective(
      List<Block> blocks, LossKernel kernel, SumReducer reducer, double weightSum, L2Penalty l2) {
    this.blocks = blocks;
    this.kernel = kernel;
    this.reducer = reducer;
    this.weightSum = weightSum;
    this.l2 = l2;
  }

  @Override
  public double calculate(double[] x, double[] gradient) {
    int dim = kernel.dimension();
    long t0 = System.nanoTime();
    double[] buf = new double[dim + 2];
    buf[dim] = kernel.addLossAndGradient(blocks, x, buf);
    double fingerprint = Arrays.hashCode(x);
    buf[dim + 1] = fingerprint;
    long t1 = System.nanoTime();
    reducer.sum(buf);
    long t2 = System.nanoTime();
    if (buf[dim + 1] != reducer.nRanks() * fingerprint) {
      throw new IllegalStateException(
          "rank "
              + reducer.rank()
              + " of "
              + reducer.nRanks()
              + " evaluated another point than"
              + " its peers (evaluation "
              + evaluations
              + "): the ranks' optimizers diverged");
    }
    double inverse = 1.0 / weightSum;
    for (int i = 0; i < dim; i++) {
      gradient[i] = buf[i] * inverse;
    }
    double loss = buf[dim] / weightSum + l2.add(x, gradient);
    evaluations++;
    computeNanos += (t1 - t0) + (System.nanoTime() - t2);
    reduceNanos += t2 - t1;
    return loss;
  }

  int evaluations() {
    return evaluations;
  }

  long computeNanos() {
    return computeNanos;
  }

  long reduceNanos() {
    return reduceNanos;
  }
}
