package org.sparkccl.ml.classification;

import java.util.Locale;
import org.apache.spark.ml.Estimator;
import org.apache.spark.ml.attribute.Attribute;
import org.apache.spark.ml.attribute.BinaryAttribute;
import org.apache.spark.ml.attribute.NominalAttribute;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.param.BooleanParam;
import org.apache.spark.ml.param.DoubleArrayParam;
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
import org.apache.spark.sql.types.StructField;
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
 * MLlib's {@code LogisticRegression} (binomial and multinomial, L2 and elastic net), trained in one
 * barrier stage: the tasks keep their rows in memory and run the same LBFGS / OWL-QN as MLlib, with
 * one SparkCCL all-reduce per loss evaluation instead of one Spark job. The params have MLlib's
 * names and defaults, so it drops into a {@code Pipeline} or {@code CrossValidator} in place of
 * MLlib's estimator; bound constraints and initial models are not supported.
 *
 * <pre>{@code
 * CclLogisticRegression lr = new CclLogisticRegression().setRegParam(0.01).setNumWorkers(4);
 * CclLogisticRegressionModel model = lr.fit(training);
 * model.transform(test).select("probability", "prediction").show();
 * }</pre>
 */
public final class CclLogisticRegression extends Estimator<CclLogisticRegressionModel>
    implements DefaultParamsWritable {
  private final String uid;
  private final Param<String> featuresCol;
  private final Param<String> labelCol;
  private final Param<String> weightCol;
  private final Param<String> predictionCol;
  private final Param<String> rawPredictionCol;
  private final Param<String> probabilityCol;
  private final IntParam maxIter;
  private final DoubleParam tol;
  private final DoubleParam regParam;
  private final DoubleParam elasticNetParam;
  private final BooleanParam fitIntercept;
  private final BooleanParam standardization;
  private final Param<String> family;
  private final DoubleParam threshold;
  private final DoubleArrayParam thresholds;
  private final DoubleParam maxBlockSizeInMB;
  private final IntParam aggregationDepth;
  private final IntParam numWorkers;
  private final DoubleParam collectiveTimeout;

  public CclLogisticRegression() {
    this(Identifiable.randomUID("cclLogreg"));
  }

  public CclLogisticRegression(String uid) {
    this.uid = uid;
    featuresCol = CclParams.column(this, "featuresCol", "features column name");
    labelCol = CclParams.column(this, "labelCol", "label column name");
    weightCol = CclParams.weightCol(this);
    predictionCol = CclParams.column(this, "predictionCol", "prediction column name");
    rawPredictionCol =
        CclParams.column(
            this, "rawPredictionCol", "raw prediction (a.k.a. confidence) column name");
    probabilityCol =
        CclParams.column(
            this,
            "probabilityCol",
            "Column name for predicted class conditional probabilities. Note: Not all models"
                + " output well-calibrated probability estimates! These probabilities should be"
                + " treated as confidences, not precise probabilities");
    maxIter = CclParams.maxIter(this);
    tol = CclParams.tol(this);
    regParam = CclParams.regParam(this);
    elasticNetParam = CclParams.elasticNetParam(this);
    fitIntercept = CclParams.fitIntercept(this);
    standardization = CclParams.standardization(this);
    family =
        new Param<>(
            this,
            "family",
            "The name of family which is a description of the label distribution to be used in"
                + " the model. Supported options: auto, binomial, multinomial.",
            ParamValidators.inArray(java.util.List.of("auto", "binomial", "multinomial")));
    threshold = CclParams.threshold(this);
    thresholds = CclParams.thresholds(this);
    maxBlockSizeInMB = CclParams.maxBlockSizeInMB(this);
    aggregationDepth = CclParams.aggregationDepth(this);
    numWorkers = CclParams.numWorkers(this);
    collectiveTimeout = CclParams.collectiveTimeout(this);
    setDefault(featuresCol, "features");
    setDefault(labelCol, "label");
    setDefault(predictionCol, "prediction");
    setDefault(rawPredictionCol, "rawPrediction");
    setDefault(probabilityCol, "probability");
    setDefault(maxIter, (Object) 100);
    setDefault(tol, (Object) 1e-6);
    setDefault(regParam, (Object) 0.0);
    setDefault(elasticNetParam, (Object) 0.0);
    setDefault(fitIntercept, (Object) true);
    setDefault(standardization, (Object) true);
    setDefault(family, "auto");
    setDefault(threshold, (Object) 0.5);
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

  public Param<String> rawPredictionCol() {
    return rawPredictionCol;
  }

  public Param<String> probabilityCol() {
    return probabilityCol;
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

  public Param<String> family() {
    return family;
  }

  public DoubleParam threshold() {
    return threshold;
  }

  public DoubleArrayParam thresholds() {
    return thresholds;
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

  private CclLogisticRegression put(Param<?> param, Object value) {
    @SuppressWarnings("unchecked")
    Param<Object> p = (Param<Object>) param;
    set(p, value);
    return this;
  }

  public CclLogisticRegression setFeaturesCol(String value) {
    return put(featuresCol, value);
  }

  public CclLogisticRegression setLabelCol(String value) {
    return put(labelCol, value);
  }

  public CclLogisticRegression setWeightCol(String value) {
    return put(weightCol, value);
  }

  public CclLogisticRegression setPredictionCol(String value) {
    return put(predictionCol, value);
  }

  public CclLogisticRegression setRawPredictionCol(String value) {
    return put(rawPredictionCol, value);
  }

  public CclLogisticRegression setProbabilityCol(String value) {
    return put(probabilityCol, value);
  }

  public CclLogisticRegression setMaxIter(int value) {
    return put(maxIter, value);
  }

  public CclLogisticRegression setTol(double value) {
    return put(tol, value);
  }

  public CclLogisticRegression setRegParam(double value) {
    return put(regParam, value);
  }

  public CclLogisticRegression setElasticNetParam(double value) {
    return put(elasticNetParam, value);
  }

  public CclLogisticRegression setFitIntercept(boolean value) {
    return put(fitIntercept, value);
  }

  public CclLogisticRegression setStandardization(boolean value) {
    return put(standardization, value);
  }

  public CclLogisticRegression setFamily(String value) {
    return put(family, value);
  }

  public CclLogisticRegression setThreshold(double value) {
    return put(threshold, value);
  }

  public CclLogisticRegression setThresholds(double[] value) {
    return put(thresholds, value);
  }

  public CclLogisticRegression setMaxBlockSizeInMB(double value) {
    return put(maxBlockSizeInMB, value);
  }

  public CclLogisticRegression setAggregationDepth(int value) {
    return put(aggregationDepth, value);
  }

  public CclLogisticRegression setNumWorkers(int value) {
    return put(numWorkers, value);
  }

  /** Seconds a collective may wait without progress; 0 keeps the executors' setting. */
  public CclLogisticRegression setCollectiveTimeout(double seconds) {
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

  public String getFamily() {
    return getOrDefault(family);
  }

  public double getThreshold() {
    return (Double) getOrDefault(threshold);
  }

  public int getNumWorkers() {
    return (Integer) getOrDefault(numWorkers);
  }

  // ---- fitting ----

  @Override
  public StructType transformSchema(StructType schema) {
    Schemas.requireVector(schema, getFeaturesCol());
    Schemas.requireNumeric(schema, getLabelCol());
    StructType out =
        Schemas.append(schema, getOrDefault(rawPredictionCol), SQLDataTypes.VectorType());
    out = Schemas.append(out, getOrDefault(probabilityCol), SQLDataTypes.VectorType());
    return Schemas.append(out, getOrDefault(predictionCol), DataTypes.DoubleType);
  }

  @Override
  public CclLogisticRegressionModel fit(Dataset<?> dataset) {
    transformSchema(dataset.schema());
    String weight = isDefined(weightCol) ? getOrDefault(weightCol) : null;
    Dataset<Row> rows = TrainingRows.select(dataset, getLabelCol(), weight, getFeaturesCol());
    int workers =
        BarrierTrainer.workers(
            dataset.sparkSession().sparkContext().getConf(),
            getNumWorkers(),
            rows.rdd().getNumPartitions());
    DatasetChecks checks = DatasetChecks.run(rows, true);
    int numClasses = numClasses(dataset.schema().apply(getLabelCol()), checks.maxLabel());
    boolean multinomial = multinomial(numClasses);
    if (isDefined(thresholds) && getOrDefault(thresholds).length != numClasses) {
      throw new IllegalArgumentException(
          "thresholds has "
              + getOrDefault(thresholds).length
              + " values but the labels have "
              + numClasses
              + " classes");
    }
    TrainSpec spec =
        new TrainSpec(
            multinomial ? TrainSpec.Loss.MULTINOMIAL : TrainSpec.Loss.BINOMIAL,
            checks.numFeatures(),
            numClasses,
            getFitIntercept(),
            getStandardization(),
            getRegParam(),
            getElasticNetParam(),
            getMaxIter(),
            getTol(),
            (Double) getOrDefault(maxBlockSizeInMB),
            Math.round((Double) getOrDefault(collectiveTimeout) * 1000));
    Fit fit = BarrierTrainer.fit(rows, spec, workers);
    CclLogisticRegressionModel model =
        new CclLogisticRegressionModel(uid, fit, numClasses, multinomial)
            .withSummary(new CclTrainingSummary(fit));
    copyValues(model, ParamMap.empty());
    model.setParent(this);
    return model;
  }

  /** Classes from the label's metadata when it has some (as MLlib), else the largest label + 1. */
  private static int numClasses(StructField label, double maxLabel) {
    int fromLabels = (int) maxLabel + 1;
    Attribute attr = Attribute.fromStructField(label);
    int fromMetadata = -1;
    if (attr instanceof BinaryAttribute) {
      fromMetadata = 2;
    } else if (attr instanceof NominalAttribute nominal && nominal.getNumValues().isDefined()) {
      fromMetadata = (Integer) nominal.getNumValues().get();
    }
    if (fromMetadata < 0) {
      return fromLabels;
    }
    if (fromMetadata < fromLabels) {
      throw new IllegalArgumentException(
          "the label's metadata says "
              + fromMetadata
              + " classes, fewer than the labels' "
              + fromLabels);
    }
    return fromMetadata;
  }

  private boolean multinomial(int numClasses) {
    return switch (getFamily().toLowerCase(Locale.ROOT)) {
      case "binomial" -> {
        if (numClasses > 2) {
          throw new IllegalArgumentException(
              "Binomial family only supports 1 or 2 outcome classes but found " + numClasses + ".");
        }
        yield false;
      }
      case "multinomial" -> true;
      default -> numClasses > 2;
    };
  }

  @Override
  public CclLogisticRegression copy(ParamMap extra) {
    return defaultCopy(extra);
  }

  public static MLReader<CclLogisticRegression> read() {
    return Persistence.paramsReader(CclLogisticRegression::new);
  }

  public static CclLogisticRegression load(String path) {
    return read().load(path);
  }
}
