package org.sparkccl.ml.regression;

import org.apache.spark.ml.Estimator;
import org.apache.spark.ml.param.BooleanParam;
import org.apache.spark.ml.param.DoubleParam;
import org.apache.spark.ml.param.IntParam;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.param.ParamValidators;
import org.apache.spark.ml.util.DefaultParamsWritable;
import org.apache.spark.ml.util.Identifiable;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.sparkccl.ml.CclParams;
import org.sparkccl.ml.CclTrainingSummary;
import org.sparkccl.ml.Persistence;
import org.sparkccl.ml.Schemas;
import org.sparkccl.ml.train.BarrierTrainer;
import org.sparkccl.ml.train.DatasetChecks;
import org.sparkccl.ml.train.Fit;
import org.sparkccl.ml.train.TrainSpec;
import org.sparkccl.ml.train.TrainingRows;

/**
 * MLlib's {@code LinearRegression} with its l-bfgs solver (least squares, L2 and elastic net),
 * trained in one barrier stage with one SparkCCL all-reduce per loss evaluation. Params have
 * MLlib's names and defaults; {@code solver} may be {@code auto} or {@code l-bfgs} and {@code loss}
 * only {@code squaredError}: other values fail, naming MLlib's estimator to use instead.
 *
 * <pre>{@code
 * CclLinearRegressionModel model =
 *     new CclLinearRegression().setRegParam(0.1).setElasticNetParam(0.5).fit(training);
 * System.out.println(model.coefficients() + " " + model.intercept());
 * }</pre>
 */
public final class CclLinearRegression extends Estimator<CclLinearRegressionModel>
    implements DefaultParamsWritable {
  private final String uid;
  private final Param<String> featuresCol;
  private final Param<String> labelCol;
  private final Param<String> weightCol;
  private final Param<String> predictionCol;
  private final IntParam maxIter;
  private final DoubleParam tol;
  private final DoubleParam regParam;
  private final DoubleParam elasticNetParam;
  private final BooleanParam fitIntercept;
  private final BooleanParam standardization;
  private final Param<String> solver;
  private final Param<String> loss;
  private final DoubleParam epsilon;
  private final DoubleParam maxBlockSizeInMB;
  private final IntParam aggregationDepth;
  private final IntParam numWorkers;
  private final DoubleParam collectiveTimeout;

  public CclLinearRegression() {
    this(Identifiable.randomUID("cclLinReg"));
  }

  public CclLinearRegression(String uid) {
    this.uid = uid;
    featuresCol = CclParams.column(this, "featuresCol", "features column name");
    labelCol = CclParams.column(this, "labelCol", "label column name");
    weightCol = CclParams.weightCol(this);
    predictionCol = CclParams.column(this, "predictionCol", "prediction column name");
    maxIter = CclParams.maxIter(this);
    tol = CclParams.tol(this);
    regParam = CclParams.regParam(this);
    elasticNetParam = CclParams.elasticNetParam(this);
    fitIntercept = CclParams.fitIntercept(this);
    standardization = CclParams.standardization(this);
    solver =
        new Param<>(
            this,
            "solver",
            "The solver algorithm for optimization. Supported options: auto, l-bfgs (normal is"
                + " MLlib's LinearRegression only). (Default auto)",
            ParamValidators.inArray(java.util.List.of("auto", "normal", "l-bfgs")));
    loss =
        new Param<>(
            this,
            "loss",
            "The loss function to be optimized. Supported options: squaredError (huber is"
                + " MLlib's LinearRegression only). (Default squaredError)",
            ParamValidators.inArray(java.util.List.of("squaredError", "huber")));
    epsilon =
        new DoubleParam(
            this,
            "epsilon",
            "The shape parameter to control the amount of robustness. Must be > 1.0; used by the"
                + " huber loss only",
            ParamValidators.gt(1.0));
    maxBlockSizeInMB = CclParams.maxBlockSizeInMB(this);
    aggregationDepth = CclParams.aggregationDepth(this);
    numWorkers = CclParams.numWorkers(this);
    collectiveTimeout = CclParams.collectiveTimeout(this);
    setDefault(featuresCol, "features");
    setDefault(labelCol, "label");
    setDefault(predictionCol, "prediction");
    setDefault(maxIter, (Object) 100);
    setDefault(tol, (Object) 1e-6);
    setDefault(regParam, (Object) 0.0);
    setDefault(elasticNetParam, (Object) 0.0);
    setDefault(fitIntercept, (Object) true);
    setDefault(standardization, (Object) true);
    setDefault(solver, "auto");
    setDefault(loss, "squaredError");
    setDefault(epsilon, (Object) 1.35);
    setDefault(maxBlockSizeInMB, (Object) 0.0);
    setDefault(aggregationDepth, (Object) 2);
    setDefault(numWorkers, (Object) 0);
    setDefault(collectiveTimeout, (Object) 0.0);
  }

  @Override
  public String uid() {
    return uid;
  }

  // ---- params (public no-argument methods: MLlib finds them by reflection) ----

  public Param<String> featuresCol() {
    return featuresCol;
  }

  public Param<String> labelCol() {
    return labelCol;
  }

  public Param<String> weightCol() {
    return weightCol;
  }

  public Param<String> predictionCol() {
    return predictionCol;
  }

  public IntParam maxIter() {
    return maxIter;
  }

  public DoubleParam tol() {
    return tol;
  }

  public DoubleParam regParam() {
    return regParam;
  }

  public DoubleParam elasticNetParam() {
    return elasticNetParam;
  }

  public BooleanParam fitIntercept() {
    return fitIntercept;
  }

  public BooleanParam standardization() {
    return standardization;
  }

  public Param<String> solver() {
    return solver;
  }

  public Param<String> loss() {
    return loss;
  }

  public DoubleParam epsilon() {
    return epsilon;
  }

  public DoubleParam maxBlockSizeInMB() {
    return maxBlockSizeInMB;
  }

  public IntParam aggregationDepth() {
    return aggregationDepth;
  }

  public IntParam numWorkers() {
    return numWorkers;
  }

  public DoubleParam collectiveTimeout() {
    return collectiveTimeout;
  }

  // ---- setters and getters ----

  private CclLinearRegression put(Param<?> param, Object value) {
    @SuppressWarnings("unchecked")
    Param<Object> p = (Param<Object>) param;
    set(p, value);
    return this;
  }

  public CclLinearRegression setFeaturesCol(String value) {
    return put(featuresCol, value);
  }

  public CclLinearRegression setLabelCol(String value) {
    return put(labelCol, value);
  }

  public CclLinearRegression setWeightCol(String value) {
    return put(weightCol, value);
  }

  public CclLinearRegression setPredictionCol(String value) {
    return put(predictionCol, value);
  }

  public CclLinearRegression setMaxIter(int value) {
    return put(maxIter, value);
  }

  public CclLinearRegression setTol(double value) {
    return put(tol, value);
  }

  public CclLinearRegression setRegParam(double value) {
    return put(regParam, value);
  }

  public CclLinearRegression setElasticNetParam(double value) {
    return put(elasticNetParam, value);
  }

  public CclLinearRegression setFitIntercept(boolean value) {
    return put(fitIntercept, value);
  }

  public CclLinearRegression setStandardization(boolean value) {
    return put(standardization, value);
  }

  public CclLinearRegression setSolver(String value) {
    return put(solver, value);
  }

  public CclLinearRegression setLoss(String value) {
    return put(loss, value);
  }

  public CclLinearRegression setEpsilon(double value) {
    return put(epsilon, value);
  }

  public CclLinearRegression setMaxBlockSizeInMB(double value) {
    return put(maxBlockSizeInMB, value);
  }

  public CclLinearRegression setAggregationDepth(int value) {
    return put(aggregationDepth, value);
  }

  public CclLinearRegression setNumWorkers(int value) {
    return put(numWorkers, value);
  }

  /** Seconds a collective may wait without progress; 0 keeps the executors' setting. */
  public CclLinearRegression setCollectiveTimeout(double seconds) {
    return put(collectiveTimeout, seconds);
  }

  public String getFeaturesCol() {
    return getOrDefault(featuresCol);
  }

  public String getLabelCol() {
    return getOrDefault(labelCol);
  }

  public int getMaxIter() {
    return (Integer) getOrDefault(maxIter);
  }

  public double getTol() {
    return (Double) getOrDefault(tol);
  }

  public double getRegParam() {
    return (Double) getOrDefault(regParam);
  }

  public double getElasticNetParam() {
    return (Double) getOrDefault(elasticNetParam);
  }

  public boolean getFitIntercept() {
    return (Boolean) getOrDefault(fitIntercept);
  }

  public boolean getStandardization() {
    return (Boolean) getOrDefault(standardization);
  }

  public String getSolver() {
    return getOrDefault(solver);
  }

  public String getLoss() {
    return getOrDefault(loss);
  }

  public int getNumWorkers() {
    return (Integer) getOrDefault(numWorkers);
  }

  // ---- fitting ----

  @Override
  public StructType transformSchema(StructType schema) {
    Schemas.requireVector(schema, getFeaturesCol());
    Schemas.requireNumeric(schema, getLabelCol());
    return Schemas.append(schema, getOrDefault(predictionCol), DataTypes.DoubleType);
  }

  /** Fails for the settings only MLlib's own estimator offers, naming it. */
  private void requireSupported() {
    if (getSolver().equals("normal")) {
      throw new IllegalArgumentException(
          "CclLinearRegression supports solver=auto or l-bfgs; for solver=normal use"
              + " org.apache.spark.ml.regression.LinearRegression");
    }
    if (!getLoss().equals("squaredError")) {
      throw new IllegalArgumentException(
          "CclLinearRegression supports loss=squaredError; for loss="
              + getLoss()
              + " use org.apache.spark.ml.regression.LinearRegression");
    }
  }

  @Override
  public CclLinearRegressionModel fit(Dataset<?> dataset) {
    requireSupported();
    transformSchema(dataset.schema());
    String weight = isDefined(weightCol) ? getOrDefault(weightCol) : null;
    Dataset<Row> rows = TrainingRows.select(dataset, getLabelCol(), weight, getFeaturesCol());
    int workers =
        BarrierTrainer.workers(
            dataset.sparkSession().sparkContext().getConf(),
            getNumWorkers(),
            rows.rdd().getNumPartitions());
    DatasetChecks checks = DatasetChecks.run(rows, false);
    TrainSpec spec =
        new TrainSpec(
            TrainSpec.Loss.SQUARED_ERROR,
            checks.numFeatures(),
            0,
            getFitIntercept(),
            getStandardization(),
            getRegParam(),
            getElasticNetParam(),
            getMaxIter(),
            getTol(),
            (Double) getOrDefault(maxBlockSizeInMB),
            Math.round((Double) getOrDefault(collectiveTimeout) * 1000));
    Fit fit = BarrierTrainer.fit(rows, spec, workers);
    CclLinearRegressionModel model =
        new CclLinearRegressionModel(uid, fit.coefficients(), fit.intercepts()[0])
            .withSummary(new CclTrainingSummary(fit));
    copyValues(model, ParamMap.empty());
    model.setParent(this);
    return model;
  }

  @Override
  public CclLinearRegression copy(ParamMap extra) {
    return defaultCopy(extra);
  }

  public static MLReader<CclLinearRegression> read() {
    return Persistence.paramsReader(CclLinearRegression::new);
  }

  public static CclLinearRegression load(String path) {
    return read().load(path);
  }
}
