package org.sparkccl.ml;

import org.apache.spark.ml.param.BooleanParam;
import org.apache.spark.ml.param.DoubleArrayParam;
import org.apache.spark.ml.param.DoubleParam;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamValidators;
import org.apache.spark.ml.param.Params;
import org.apache.spark.ml.util.Identifiable;

/**
 * The params of the SparkCCL estimators and models, with MLlib's names, docs and checks, so that
 * {@code ParamGridBuilder}, {@code CrossValidator} and saved pipelines treat them as MLlib's. Each
 * estimator and model creates its own (a param belongs to one owner).
 *
 * <pre>{@code
 * private final DoubleParam regParam = CclParams.regParam(this);
 * public DoubleParam regParam() {
 *   return regParam;
 * }
 * }</pre>
 */
public final class CclParams {
  private CclParams() {}

  public static Param<String> column(Identifiable owner, String name, String doc) {
    return new Param<>(owner, name, doc);
  }

  public static IntParam maxIter(Identifiable owner) {
    return new IntParam(
        owner, "maxIter", "maximum number of iterations (>= 0)", ParamValidators.gtEq(0));
  }

  public static DoubleParam tol(Identifiable owner) {
    return new DoubleParam(
        owner,
        "tol",
        "the convergence tolerance for iterative algorithms (>= 0)",
        ParamValidators.gtEq(0));
  }

  public static DoubleParam regParam(Identifiable owner) {
    return new DoubleParam(
        owner, "regParam", "regularization parameter (>= 0)", ParamValidators.gtEq(0));
  }

  public static DoubleParam elasticNetParam(Identifiable owner) {
    return new DoubleParam(
        owner,
        "elasticNetParam",
        "the ElasticNet mixing parameter, in range [0, 1]. For alpha = 0, the penalty is an L2"
            + " penalty. For alpha = 1, it is an L1 penalty",
        ParamValidators.inRange(0, 1));
  }

  public static BooleanParam fitIntercept(Identifiable owner) {
    return new BooleanParam(owner, "fitIntercept", "whether to fit an intercept term");
  }

  public static BooleanParam standardization(Identifiable owner) {
    return new BooleanParam(
        owner,
        "standardization",
        "whether to standardize the training features before fitting the model");
  }

  public static Param<String> weightCol(Identifiable owner) {
    return new Param<>(
        owner,
        "weightCol",
        "weight column name. If this is not set or empty, we treat all instance weights as 1.0");
  }

  public static DoubleParam maxBlockSizeInMB(Identifiable owner) {
    return new DoubleParam(
        owner,
        "maxBlockSizeInMB",
        "Maximum memory in MB for stacking input data into blocks. Default 0.0 means 1.0 MB, as"
            + " in MLlib",
        ParamValidators.gtEq(0));
  }

  public static IntParam aggregationDepth(Identifiable owner) {
    return new IntParam(
        owner,
        "aggregationDepth",
        "suggested depth for treeAggregate (>= 2); accepted for compatibility with MLlib and"
            + " without effect: SparkCCL sums with one all-reduce",
        ParamValidators.gtEq(2));
  }

  public static IntParam numWorkers(Identifiable owner) {
    return new IntParam(
        owner,
        "numWorkers",
        "barrier tasks that train together (>= 0); 0 means the application's task slots where"
            + " the master tells them, else the input's partitions",
        ParamValidators.gtEq(0));
  }

  public static DoubleParam collectiveTimeout(Identifiable owner) {
    return new DoubleParam(
        owner,
        "collectiveTimeout",
        "seconds a collective may wait without progress before the fit fails (>= 0); 0 means"
            + " the executors' spark.ccl.timeout",
        ParamValidators.gtEq(0));
  }

  public static DoubleParam threshold(Identifiable owner) {
    return new DoubleParam(
        owner,
        "threshold",
        "threshold in binary classification prediction, in range [0, 1]",
        ParamValidators.inRange(0, 1));
  }

  public static DoubleArrayParam thresholds(Params owner) {
    return new DoubleArrayParam(
        owner,
        "thresholds",
        "Thresholds in multi-class classification to adjust the probability of predicting each"
            + " class. Array must have length equal to the number of classes, with values > 0"
            + " excepting that at most one value may be 0. The class with largest value p/t is"
            + " predicted, where p is the original probability of that class and t is the"
            + " class's threshold");
  }
}
