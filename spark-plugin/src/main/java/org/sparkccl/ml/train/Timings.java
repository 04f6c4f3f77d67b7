package org.sparkccl.ml.train;

/**
 * Where a fit's time went, in milliseconds, as rank 0 saw it: from the driver's submission to the
 * task's start ({@code launch}), packing rows into blocks, forming the communicator, the summary
 * all-reduce, the optimizer (split into local computation and all-reduces over {@code evaluations}
 * loss evaluations), and returning the result to the driver.
 *
 * <pre>{@code
 * Timings t = model.summary().timings();
 * double perEvaluationMs = t.optimizeMs() / t.evaluations();
 * }</pre>
 */
public record Timings(
    double launchMs,
    double packMs,
    double communicatorMs,
    double summaryMs,
    double optimizeMs,
    double computeMs,
    double reduceMs,
    int evaluations,
    double resultMs) {

  static final Timings NONE = new Timings(0, 0, 0, 0, 0, 0, 0, 0, 0);

  Timings withLaunch(double launch, double pack, double communicator) {
    return new Timings(
        launch,
        pack,
        communicator,
        summaryMs,
        optimizeMs,
        computeMs,
        reduceMs,
        evaluations,
        resultMs);
  }

  /** With the time from the task's end to the driver holding the result. */
  Timings withResult(double result) {
    return new Timings(
        launchMs,
        packMs,
        communicatorMs,
        summaryMs,
        optimizeMs,
        computeMs,
        reduceMs,
        evaluations,
        result);
  }

  @Override
  public String toString() {
    return String.format(
        "launch=%.0fms pack=%.0fms communicator=%.0fms summary=%.1fms optimize=%.0fms"
            + " (compute=%.0fms allreduce=%.0fms, %d evaluations) result=%.0fms",
        launchMs,
        packMs,
        communicatorMs,
        summaryMs,
        optimizeMs,
        computeMs,
        reduceMs,
        evaluations,
        resultMs);
  }
}
