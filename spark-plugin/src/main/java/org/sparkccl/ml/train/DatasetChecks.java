package org.sparkccl.ml.train;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.count;
import static org.apache.spark.sql.functions.floor;
import static org.apache.spark.sql.functions.isnan;
import static org.apache.spark.sql.functions.lit;
import static org.apache.spark.sql.functions.max;
import static org.apache.spark.sql.functions.min;
import static org.apache.spark.sql.functions.sum;
import static org.apache.spark.sql.functions.udf;
import static org.apache.spark.sql.functions.when;

import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.types.DataTypes;

/**
 * What the driver checks before any barrier task starts, in one aggregation over the prepared rows
 * (label, weight, features): a bad input fails here with a message, not as a hung or failed stage.
 * Also yields the feature count and, for classification, the largest label.
 *
 * @param rows the number of rows
 * @param numFeatures the features' size (every row's)
 * @param maxLabel the largest label
 *     <pre>{@code
 * DatasetChecks checks = DatasetChecks.run(TrainingRows.select(df, "label", null, "features"), true);
 * int numClasses = (int) checks.maxLabel() + 1;
 * }</pre>
 */
public record DatasetChecks(long rows, int numFeatures, double maxLabel) {

  public static DatasetChecks run(Dataset<Row> data, boolean classification) {
    UDF1<Vector, Integer> size = v -> v == null ? -1 : v.size();
    Column label = col("label");
    Column weight = col("weight");
    Column features = udf(size, DataTypes.IntegerType).apply(col("features"));
    Column badLabel = label.isNull().or(isnan(label)).or(infinite(label));
    if (classification) {
      badLabel = badLabel.or(label.lt(0)).or(floor(label).notEqual(label));
    }
    Column badWeight = weight.isNull().or(isnan(weight)).or(infinite(weight)).or(weight.lt(0));
    Row r =
        data.agg(
                count(lit(1)),
                sum(when(badLabel, 1).otherwise(0)),
                sum(when(badWeight, 1).otherwise(0)),
                min(features),
                max(features),
                max(when(badLabel, null).otherwise(label)))
            .head();
    long n = r.getLong(0);
    if (n == 0) {
      throw new IllegalArgumentException("the dataset is empty; there is nothing to train on");
    }
    long labels = r.getLong(1);
    if (labels > 0) {
      throw new IllegalArgumentException(
          labels
              + " of "
              + n
              + " rows have a label that is null, NaN or infinite"
              + (classification ? ", or not a class index 0, 1, ..., K-1" : ""));
    }
    long weights = r.getLong(2);
    if (weights > 0) {
      throw new IllegalArgumentException(
          weights + " of " + n + " rows have a weight that is null, NaN, infinite or negative");
    }
    int low = r.getInt(3);
    int high = r.getInt(4);
    if (low < 0) {
      throw new IllegalArgumentException("some rows have a null features vector");
    }
    if (low != high) {
      throw new IllegalArgumentException(
          "the features vectors differ in size, from " + low + " to " + high);
    }
    return new DatasetChecks(n, high, r.getDouble(5));
  }

  private static Column infinite(Column c) {
    return c.equalTo(Double.POSITIVE_INFINITY).or(c.equalTo(Double.NEGATIVE_INFINITY));
  }
}
