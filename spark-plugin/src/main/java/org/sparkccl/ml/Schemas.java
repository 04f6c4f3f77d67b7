package org.sparkccl.ml;

import java.util.Arrays;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.NumericType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * Schema checks the estimators and models share, with MLlib's kind of messages. *
 *
 * <pre>{@code
 * Schemas.requireVector(schema, "features");
 * StructType out = Schemas.append(schema, "prediction", DataTypes.DoubleType);
 * }</pre>
 */
public final class Schemas {
  private Schemas() {}

  public static void requireVector(StructType schema, String column) {
    DataType type = field(schema, column).dataType();
    if (!type.equals(SQLDataTypes.VectorType())) {
      throw new IllegalArgumentException(
          "Column "
              + column
              + " must be of type "
              + SQLDataTypes.VectorType().simpleString()
              + " but was actually "
              + type.simpleString()
              + ".");
    }
  }

  public static void requireNumeric(StructType schema, String column) {
    DataType type = field(schema, column).dataType();
    if (!(type instanceof NumericType)) {
      throw new IllegalArgumentException(
          "Column "
              + column
              + " must be of a numeric type but was actually "
              + type.simpleString()
              + ".");
    }
  }

  /** {@code schema} with {@code column} appended; an empty name appends nothing. */
  public static StructType append(StructType schema, String column, DataType type) {
    if (column == null || column.isEmpty()) {
      return schema;
    }
    if (Arrays.asList(schema.fieldNames()).contains(column)) {
      throw new IllegalArgumentException("Output column " + column + " already exists.");
    }
    return schema.add(
        new StructField(column, type, false, org.apache.spark.sql.types.Metadata.empty()));
  }

  private static StructField field(StructType schema, String column) {
    if (!Arrays.asList(schema.fieldNames()).contains(column)) {
      throw new IllegalArgumentException(
          "Column "
              + column
              + " does not exist. Available: "
              + String.join(", ", schema.fieldNames()));
    }
    return schema.apply(column);
  }
}
