package org.sparkccl.ml.regression;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.udf;

import java.util.List;
import org.apache.spark.ml.Model;
import org.apache.spark.ml.linalg.DenseVector;
import org.apache.spark.ml.linalg.SparseVector;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.ml.util.DefaultParamsWritable;
import org.apache.spark.ml.util.MLReader;
import org.apache.spark.ml.util.MLWriter;
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

/**
 * The model {@link CclLinearRegression} fits: {@code prediction = coefficients . features +
 * intercept}, saved and loaded in MLlib's layout.
 *
 * <pre>{@code
 * CclLinearRegressionModel model = new CclLinearRegression().fit(training);
 * model.transform(test).select("prediction").show();
 * }</pre>
 */
public final class CclLinearRegressionModel extends Model<CclLinearRegressionModel>
    implements DefaultParamsWritable {
  private final String uid;
  private final double[] coefficients;
  private final double intercept;
  private CclTrainingSummary summary;
  private final Param<String> featuresCol;
  private final Param<String> predictionCol;

  CclLinearRegressionModel(String uid, double[] coefficients, double intercept) {
    this.uid = uid;
    this.coefficients = coefficients;
    this.intercept = intercept;
    featuresCol = CclParams.column(this, "featuresCol", "features column name");
    predictionCol = CclParams.column(this, "predictionCol", "prediction column name");
    setDefault(featuresCol, "features");
    setDefault(predictionCol, "prediction");
  }

  CclLinearRegressionModel withSummary(CclTrainingSummary s) {
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

  public CclLinearRegressionModel setFeaturesCol(String value) {
    set(featuresCol, value);
    return this;
  }

  public CclLinearRegressionModel setPredictionCol(String value) {
    set(predictionCol, value);
    return this;
  }

  public Vector coefficients() {
    return Vectors.dense(coefficients.clone());
  }

  public double intercept() {
    return intercept;
  }

  public int numFeatures() {
    return coefficients.length;
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

  public double predict(Vector features) {
    return predict(coefficients, intercept, features);
  }

  private static double predict(double[] coefficients, double intercept, Vector features) {
    double y = intercept;
    if (features instanceof SparseVector sparse) {
      int[] idx = sparse.indices();
      double[] values = sparse.values();
      for (int k = 0; k < idx.length; k++) {
        y += coefficients[idx[k]] * values[k];
      }
    } else {
      double[] values = ((DenseVector) features).values();
      for (int j = 0; j < coefficients.length; j++) {
        y += coefficients[j] * values[j];
      }
    }
    return y;
  }

  @Override
  public StructType transformSchema(StructType schema) {
    Schemas.requireVector(schema, getOrDefault(featuresCol));
    return Schemas.append(schema, getOrDefault(predictionCol), DataTypes.DoubleType);
  }

  @Override
  public Dataset<Row> transform(Dataset<?> dataset) {
    transformSchema(dataset.schema());
    String out = getOrDefault(predictionCol);
    if (out.isEmpty()) {
      return dataset.toDF();
    }
    double[] w = coefficients;
    double b = intercept;
    UDF1<Vector, Double> prediction = v -> predict(w, b, v);
    return dataset
        .toDF()
        .withColumn(
            out, udf(prediction, DataTypes.DoubleType).apply(col(getOrDefault(featuresCol))));
  }

  @Override
  public CclLinearRegressionModel copy(ParamMap extra) {
    CclLinearRegressionModel copy = new CclLinearRegressionModel(uid, coefficients, intercept);
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
          .add("coefficients", DataTypes.createArrayType(DataTypes.DoubleType))
          .add("intercept", DataTypes.DoubleType);

  @Override
  public MLWriter write() {
    return Persistence.modelWriter(DefaultParamsWritable.super.write(), this::dataRow);
  }

  private Dataset<Row> dataRow(SparkSession spark) {
    return spark.createDataFrame(List.of(RowFactory.create(coefficients, intercept)), DATA);
  }

  public static MLReader<CclLinearRegressionModel> read() {
    return Persistence.modelReader(
        (uid, row) -> {
          List<Double> w = row.getList(0);
          return new CclLinearRegressionModel(
              uid, w.stream().mapToDouble(Double::doubleValue).toArray(), row.getDouble(1));
        });
  }

  public static CclLinearRegressionModel load(String path) {
    return read().load(path);
  }

  @Override
  public String toString() {
    return "CclLinearRegressionModel: uid=" + uid + ", numFeatures=" + coefficients.length;
  }
}
