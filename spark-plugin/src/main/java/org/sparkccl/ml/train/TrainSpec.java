package org.sparkccl.ml.train;

import java.io.Serializable;

/**
 * What one barrier stage trains, fixed on the driver and shipped to the tasks: the loss, the shape,
 * and MLlib's settings with their MLlib meanings.
 *
 * @param numClasses classes of a classification (the label histogram's length); 0 for regression
 * @param timeoutMillis longest wait of a collective, or 0 for the executor's {@code
 *     spark.ccl.timeout}
 *     <pre>{@code
 * TrainSpec spec = new TrainSpec(TrainSpec.Loss.SQUARED_ERROR, 10, 0, true, true, 0.1, 0.5, 100,
 *     1e-6, 0.0, 0);
 * }</pre>
 */
public record TrainSpec(
    Loss loss,
    int numFeatures,
    int numClasses,
    boolean fitIntercept,
    boolean standardization,
    double regParam,
    double elasticNetParam,
    int maxIter,
    double tol,
    double maxBlockSizeInMB,
    long timeoutMillis)
    implements Serializable {

  /** The losses the trainer knows. */
  public enum Loss {
    BINOMIAL,
    MULTINOMIAL,
    SQUARED_ERROR
  }

  boolean classification() {
    return loss != Loss.SQUARED_ERROR;
  }

  /** Coefficient sets: {@code K} for multinomial, else 1. */
  int numSets() {
    return loss == Loss.MULTINOMIAL ? numClasses : 1;
  }

  Problem problem() {
    return classification() ? new LogisticProblem(this) : new LeastSquaresProblem(this);
  }
}
