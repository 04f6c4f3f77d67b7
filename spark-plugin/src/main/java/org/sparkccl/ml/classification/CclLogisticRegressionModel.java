package org.sparkccl.ml.classification;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.udf;

import java.util.List;
import org.apache.spark.ml.Model;
import org.apache.spark.ml.linalg.DenseMatrix;
import org.apache.spark.ml.linalg.Matrix;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.ml.param.DoubleArrayParam;
import org.apache.spark.ml.param.DoubleParam;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.util.DefaultParamsWritable;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.ml.util.MLWriter;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.sparkccl.ml.CclParams;
import org.sparkccl.ml.CclTrainingSummary;
import org.sparkccl.ml.Persistence;
import org.sparkccl.ml.Schemas;
import org.sparkccl.ml.train.Fit;

/**
 * The model {@link CclLogisticRegression} fits: MLlib's {@code LogisticRegressionModel} output
 * columns ({@code rawPrediction}, {@code probability}, {@code prediction}) and accessors, saved and
 * loaded in MLlib's layout.
 *
 * <pre>{@code
 * CclLogisticRegressionModel model = new CclLogisticRegression().fit(training);
 * model.write().overwrite().save("/models/lr");
 * CclLogisticRegressionModel again = CclLogisticRegressionModel.load("/models/lr");
 * double p = again.predictProbability(Vectors.dense(0.5, 1.0)).apply(1);
 * }</pre>
 */
public final class CclLogisticRegressionModel extends Model<CclLogisticRegressionModel>
    implements DefaultParamsWritable {
  private final String uid;
  private final int numClasses;
  private final boolean multinomial;
  private final int numFeatures;
  private final double[] coefficients; // row-major sets x numFeatures
  private final double[] intercepts;
  private CclTrainingSummary summary;
  private final Param<String> featuresCol;
  private final Param<String> predictionCol;
  private final Param<String> rawPredictionCol;
  private final Param<String> probabilityCol;
  private final DoubleParam threshold;
  private final DoubleArrayParam thresholds;

  CclLogisticRegressionModel(String uid, Fit fit, int numClasses, boolean multinomial) {
    this(uid, numClasses, multinomial, fit.numFeatures(), fit.coefficients(), fit.intercepts());
  }

  private CclLogisticRegressionModel(
      String uid,
      int numClasses,
      boolean multinomial,
      int numFeatures,
      double[] coefficients,
      double[] intercepts) {
    this.uid = uid;
    this.numClasses = numClasses;
    this.multinomial = multinomial;
    this.numFeatures = numFeatures;
    this.coefficients = coefficients;
    this.intercepts = intercepts;
    featuresCol = CclParams.column(this, "featuresCol", "features column name");
    predictionCol = CclParams.column(this, "predictionCol", "prediction column name");
    rawPredictionCol =
        CclParams.column(
            this, "rawPredictionCol", "raw prediction (a.k.a. confidence) column name");
    probabilityCol =
        CclParams.column(
            this, "probabilityCol", "Column name for predicted class conditional probabilities");
    threshold = CclParams.threshold(this);
    thresholds = CclParams.thresholds(this);
    setDefault(featuresCol, "features");
    setDefault(predictionCol, "prediction");
    setDefault(rawPredictionCol, "rawPrediction");
    setDefault(probabilityCol, "probability");
    setDefault(threshold, (Object) 0.5);
  }

  CclLogisticRegressionModel withSummary(CclTrainingSummary s) {
    this.summary = s;
    return this;
  }

  @Override
  public String uid() {
    return uid;
  }

  public Param<String> featuresCol() {
    return featuresCol;
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

  public DoubleParam threshold() {
    return threshold;
  }

  public DoubleArrayParam thresholds() {
    return thresholds;
  }

  private CclLogisticRegressionModel put(Param<?> param, Object value) {
    @SuppressWarnings("unchecked")
    Param<Object> p = (Param<Object>) param;
    set(p, value);
    return this;
  }

  public CclLogisticRegressionModel setFeaturesCol(String value) {
    return put(featuresCol, value);
  }

  public CclLogisticRegressionModel setPredictionCol(String value) {
    return put(predictionCol, value);
  }

  public CclLogisticRegressionModel setRawPredictionCol(String value) {
    return put(rawPredictionCol, value);
  }

  public CclLogisticRegressionModel setProbabilityCol(String value) {
    return put(probabilityCol, value);
  }

  public CclLogisticRegressionModel setThreshold(double value) {
    return put(threshold, value);
  }

  public CclLogisticRegressionModel setThresholds(double[] value) {
    return put(thresholds, value);
  }

  // ---- the model ----

  public int numClasses() {
    return numClasses;
  }

  public int numFeatures() {
    return numFeatures;
  }

  public boolean isMultinomial() {
    return multinomial;
  }

  /** Row {@code k}: the coefficients of class {@code k} (one row for binomial). */
  public Matrix coefficientMatrix() {
    return new DenseMatrix(intercepts.length, numFeatures, coefficients.clone(), true);
  }

  public Vector interceptVector() {
    return Vectors.dense(intercepts.clone());
  }

  /** The binomial model's coefficients; a multinomial model has {@link #coefficientMatrix()}. */
  public Vector coefficients() {
    requireBinomial("coefficientMatrix");
    return Vectors.dense(coefficients.clone());
  }

  public double intercept() {
    requireBinomial("interceptVector");
    return intercepts[0];
  }

  private void requireBinomial(String instead) {
    if (multinomial) {
      throw new IllegalStateException(
          "Multinomial models contain a matrix of coefficients, use " + instead + " instead.");
    }
  }

  public boolean hasSummary() {
    return summary != null;
  }

  /** The training summary; only the model {@code fit} returned has one. */
  public CclTrainingSummary summary() {
    if (summary == null) {
      throw new IllegalStateException("No training summary available for this model");
    }
    return summary;
  }

  private LogisticScorer scorer() {
    double[] t = isDefined(thresholds) ? getOrDefault(thresholds) : null;
    return new LogisticScorer(
        intercepts.length,
        numFeatures,
        coefficients,
        intercepts,
        multinomial,
        (Double) getOrDefault(threshold),
        t);
  }

  public Vector predictRaw(Vector features) {
    return scorer().raw(features);
  }

  public Vector predictProbability(Vector features) {
    LogisticScorer s = scorer();
    return s.probability(s.raw(features));
  }

  public double predict(Vector features) {
    LogisticScorer s = scorer();
    return s.prediction(s.probability(s.raw(features)));
  }

  @Override
  public StructType transformSchema(StructType schema) {
    Schemas.requireVector(schema, getOrDefault(featuresCol));
    StructType out =
        Schemas.append(schema, getOrDefault(rawPredictionCol), SQLDataTypes.VectorType());
    out = Schemas.append(out, getOrDefault(probabilityCol), SQLDataTypes.VectorType());
    return Schemas.append(out, getOrDefault(predictionCol), DataTypes.DoubleType);
  }

  @Override
  public Dataset<Row> transform(Dataset<?> dataset) {
    transformSchema(dataset.schema());
    LogisticScorer s = scorer();
    UDF1<Vector, Vector> raw = s::raw;
    UDF1<Vector, Vector> probability = v -> s.probability(s.raw(v));
    UDF1<Vector, Double> prediction = v -> s.prediction(s.probability(s.raw(v)));
    Column features = col(getOrDefault(featuresCol));
    Dataset<Row> out = dataset.toDF();
    String rawCol = getOrDefault(rawPredictionCol);
    if (!rawCol.isEmpty()) {
      out = out.withColumn(rawCol, udf(raw, SQLDataTypes.VectorType()).apply(features));
    }
    String probabilityColName = getOrDefault(probabilityCol);
    if (!probabilityColName.isEmpty()) {
      out =
          out.withColumn(
              probabilityColName, udf(probability, SQLDataTypes.VectorType()).apply(features));
    }
    String predictionColName = getOrDefault(predictionCol);
    if (!predictionColName.isEmpty()) {
      out =
          out.withColumn(predictionColName, udf(prediction, DataTypes.DoubleType).apply(features));
    }
    return out;
  }

  @Override
  public CclLogisticRegressionModel copy(ParamMap extra) {
    CclLogisticRegressionModel copy =
        new CclLogisticRegressionModel(
            uid, numClasses, multinomial, numFeatures, coefficients, intercepts);
    copyValues(copy, extra);
    copy.summary = summary;
    if (hasParent()) {
      copy.setParent(parent());
    }
    return copy;
  }

  // ---- persistence ----

  private static final StructType DATA =
      new StructType()
          .add("numClasses", DataTypes.IntegerType)
          .add("isMultinomial", DataTypes.BooleanType)
          .add("numFeatures", DataTypes.IntegerType)
          .add("coefficients", DataTypes.createArrayType(DataTypes.DoubleType))
          .add("intercepts", DataTypes.createArrayType(DataTypes.DoubleType));

  @Override
  public MLWriter write() {
    return Persistence.modelWriter(DefaultParamsWritable.super.write(), this::dataRow);
  }

  private Dataset<Row> dataRow(SparkSession spark) {
    Row row = RowFactory.create(numClasses, multinomial, numFeatures, coefficients, intercepts);
    return spark.createDataFrame(List.of(row), DATA);
  }

  public static MLReader<CclLogisticRegressionModel> read() {
    return Persistence.modelReader(
        (uid, row) ->
            new CclLogisticRegressionModel(
                uid,
                row.getInt(0),
                row.getBoolean(1),
                row.getInt(2),
                doubles(row, 3),
                doubles(row, 4)));
  }

  public static CclLogisticRegressionModel load(String path) {
    return read().load(path);
  }

  static double[] doubles(Row row, int i) {
    List<Double> list = row.getList(i);
    return list.stream().mapToDouble(Double::doubleValue).toArray();
  }

  @Override
  public String toString() {
    return "CclLogisticRegressionModel: uid="
        + uid
        + ", numClasses="
        + numClasses
        + ", numFeatures="
        + numFeatures;
  }
}
