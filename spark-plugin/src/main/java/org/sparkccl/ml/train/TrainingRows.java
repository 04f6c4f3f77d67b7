package org.sparkccl.ml.train;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.lit;

import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;

/**
 * The three columns a fit reads, under fixed names: label, weight (1 when unset), features. *
 *
 * <pre>{@code
 * Dataset<Row> rows = TrainingRows.select(df, "y", "w", "x"); // columns label, weight, features
 * }</pre>
 */
public final class TrainingRows {
  private TrainingRows() {}

  /**
   * The label, weight and features columns of {@code dataset}, as the trainer reads them.
   *
   * @param weightCol the weight column, or {@code null} / empty for weight 1
   */
  public static Dataset<Row> select(
      Dataset<?> dataset, String labelCol, String weightCol, String featuresCol) {
    Column weight =
        weightCol == null || weightCol.isEmpty() ? lit(1.0) : col(weightCol).cast("double");
    return dataset.select(
        col(labelCol).cast("double").as("label"),
        weight.as("weight"),
        col(featuresCol).as("features"));
  }
}
