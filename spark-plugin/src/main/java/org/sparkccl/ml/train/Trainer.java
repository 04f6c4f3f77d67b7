package org.sparkccl.ml.train;

import java.util.List;
import org.sparkccl.ml.optim.BreezeMinimizer;
import org.sparkccl.ml.optim.Minimum;

/**
 * One rank's whole fit, given its blocks and a way to sum over ranks: the summary all-reduce,
 * standardization in place, then the optimizer with one all-reduce per loss evaluation. Every rank
 * returns the same {@link Fit}. Knows nothing of Spark, so tests run ranks as threads.
 *
 * <pre>{@code
 * Fit fit = Trainer.train(spec, Blocks.pack(rows, d, Blocks.rowsPerBlock(0, d)), reducer);
 * }</pre>
 */
final class Trainer {
  private Trainer() {}

  /** Values a reducer must hold for {@code spec}: the summary or one loss evaluation. */
  public static int reduceCapacity(TrainSpec spec) {
    int classes = spec.classification() ? spec.numClasses() : 0;
    int dim = spec.numSets() * (spec.numFeatures() + 1);
    return Math.max(Summary.length(spec.numFeatures(), classes), dim + 2);
  }

  public static Fit train(TrainSpec spec, List<Block> blocks, SumReducer reducer) {
    int d = spec.numFeatures();
    int classes = spec.classification() ? spec.numClasses() : 0;
    long t0 = System.nanoTime();
    double[] stats = Summary.local(blocks, d, classes);
    reducer.sum(stats);
    Summary s = Summary.of(stats, d, classes);
    if (!(s.weightSum > 0)) {
      throw new InputRejected(
          "the instances' weights sum to " + s.weightSum + "; nothing to train on");
    }
    long t1 = System.nanoTime();
    Problem problem = spec.problem();
    Fit trivial = problem.trivial(s);
    if (trivial != null) {
      return trivial.withTimings(new Timings(0, 0, 0, ms(t1 - t0), 0, 0, 0, 0, 0));
    }
    double[] inverseStd = new double[d];
    double[] scaledMean = new double[d];
    for (int j = 0; j < d; j++) {
      inverseStd[j] = s.std[j] != 0.0 ? 1.0 / s.std[j] : 0.0;
      scaledMean[j] = inverseStd[j] * s.mean[j];
    }
    for (Block b : blocks) {
      b.scaleFeatures(inverseStd);
    }
    DistributedObjective objective =
        new DistributedObjective(
            blocks, problem.kernel(s, inverseStd, scaledMean), reducer, s.weightSum, problem.l2(s));
    Minimum minimum =
        BreezeMinimizer.minimize(
            objective, problem.start(s), spec.maxIter(), spec.tol(), problem.l1(s));
    if (minimum == null) {
      throw new IllegalStateException("the optimizer returned no solution");
    }
    long t2 = System.nanoTime();
    Fit fit = problem.finish(minimum.solution(), minimum.objectiveHistory(), s, scaledMean);
    return fit.withTimings(
        new Timings(
            0,
            0,
            0,
            ms(t1 - t0),
            ms(t2 - t1),
            ms(objective.computeNanos()),
            ms(objective.reduceNanos()),
            objective.evaluations(),
            0));
  }

  static double ms(long nanos) {
    return nanos / 1e6;
  }
}
