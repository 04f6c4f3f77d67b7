package org.sparkccl.ml;

import java.io.Serializable;
import org.sparkccl.ml.train.Fit;
import org.sparkccl.ml.train.Timings;

/**
 * How a SparkCCL fit went: the objective history as MLlib's training summaries report it (the
 * objective before the first step, then after each iteration), the loss evaluations, and where the
 * time went.
 *
 * <pre>{@code
 * CclTrainingSummary s = model.summary();
 * System.out.println(s.totalIterations() + " iterations, " + s.timings());
 * }</pre>
 */
public final class CclTrainingSummary implements Serializable {
  private final double[] objectiveHistory;
  private final Timings timings;

  public CclTrainingSummary(Fit fit) {
    this.objectiveHistory = fit.objectiveHistory().clone();
    this.timings = fit.timings();
  }

  public double[] objectiveHistory() {
    return objectiveHistory.clone();
  }

  /** Iterations the optimizer made, as MLlib counts them. */
  public int totalIterations() {
    return Math.max(0, objectiveHistory.length - 1);
  }

  /** Loss evaluations, each one all-reduce (line searches evaluate more often than they step). */
  public int lossEvaluations() {
    return timings.evaluations();
  }

  public Timings timings() {
    return timings;
  }
}
