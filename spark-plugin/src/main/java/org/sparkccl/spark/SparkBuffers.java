package org.sparkccl.spark;

import java.util.List;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.sparkccl.DataType;
import org.sparkccl.device.Device;
import org.sparkccl.device.DeviceBuffer;

/**
 * Makes RDDs of device buffers from ordinary data, and brings them back, since users start from
 * arrays and tables. Buffers are made on each task's device (its {@code gpu} resource when the
 * executor has a usable one, else host memory).
 *
 * <pre>{@code
 * JavaRDD<DeviceBuffer> bufs = SparkBuffers.fromArrayColumn(df, "gradient");   // float32
 * JavaRDD<DeviceBuffer> sum = SparkCCL.allReduce(bufs, SparkBuffers.dataType(df, "gradient"),
 *     ReduceOp.SUM);
 * List<float[]> result = SparkBuffers.toFloatArrays(sum).collect();
 * }</pre>
 *
 * <p>A buffer is released by {@code close()}. Host buffers are also freed by the garbage collector
 * once unreachable; GPU buffers are not, so a job that keeps an RDD of GPU buffers closes them
 * itself (for example in a {@code foreachPartition} after the last use). The array forms of the
 * collectives ({@code SparkCCL.allReduce(JavaRDD<float[]>, ...)}) manage their buffers and need
 * none of this. To {@code collect} or shuffle buffers themselves, use Kryo with {@link
 * SparkCCLKryoRegistrator}; {@link #toFloatArrays} needs neither.
 */
public final class SparkBuffers {
  private SparkBuffers() {}

  /** One float32 buffer per array. */
  public static JavaRDD<DeviceBuffer> fromFloatArrays(JavaRDD<float[]> rdd) {
    return rdd.map(a -> HostArrays.toBuffer(a, taskDevice()));
  }

  /** One float64 buffer per array. */
  public static JavaRDD<DeviceBuffer> fromDoubleArrays(JavaRDD<double[]> rdd) {
    return rdd.map(a -> HostArrays.toBuffer(a, taskDevice()));
  }

  /** Each float32 buffer as a {@code float[]}. */
  public static JavaRDD<float[]> toFloatArrays(JavaRDD<DeviceBuffer> rdd) {
    return rdd.map(HostArrays::toFloats);
  }

  /** Each float64 buffer as a {@code double[]}. */
  public static JavaRDD<double[]> toDoubleArrays(JavaRDD<DeviceBuffer> rdd) {
    return rdd.map(HostArrays::toDoubles);
  }

  /**
   * One buffer per row from an array column of floats (float32 buffers) or doubles (float64),
   * keeping the Dataset's partitioning. Null arrays or null elements fail naming the column.
   */
  public static JavaRDD<DeviceBuffer> fromArrayColumn(Dataset<Row> ds, String column) {
    DataType dtype = dataType(ds, column);
    return ds.select(column).javaRDD().map(row -> rowToBuffer(row, column, dtype));
  }

  /**
   * The element type of array column {@code column}: {@code FLOAT32} for {@code array<float>},
   * {@code FLOAT64} for {@code array<double>}.
   *
   * @throws IllegalArgumentException when the column is missing or of another type
   */
  public static DataType dataType(Dataset<Row> ds, String column) {
    StructField field;
    try {
      field = ds.schema().apply(column);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "no column '" + column + "'; the Dataset has " + List.of(ds.columns()), e);
    }
    if (field.dataType() instanceof ArrayType array) {
      if (array.elementType().equals(DataTypes.FloatType)) {
        return DataType.FLOAT32;
      }
      if (array.elementType().equals(DataTypes.DoubleType)) {
        return DataType.FLOAT64;
      }
    }
    throw new IllegalArgumentException(
        "column '"
            + column
            + "' is "
            + field.dataType().simpleString()
            + "; expected array<float> or array<double>");
  }

  private static DeviceBuffer rowToBuffer(Row row, String column, DataType dtype) {
    if (row.isNullAt(0)) {
      throw new IllegalArgumentException("column '" + column + "' holds a null array");
    }
    List<Object> values = row.getList(0);
    try {
      if (dtype == DataType.FLOAT32) {
        float[] a = new float[values.size()];
        for (int i = 0; i < a.length; i++) {
          a[i] = (Float) values.get(i);
        }
        return HostArrays.toBuffer(a, taskDevice());
      }
      double[] a = new double[values.size()];
      for (int i = 0; i < a.length; i++) {
        a[i] = (Double) values.get(i);
      }
      return HostArrays.toBuffer(a, taskDevice());
    } catch (NullPointerException e) {
      throw new IllegalArgumentException("column '" + column + "' holds an array with a null", e);
    }
  }

  static Device taskDevice() {
    TaskContext task = TaskContext.get();
    ExecutorEngine engine = ExecutorEngine.get();
    return task == null ? engine.device() : engine.deviceFor(task.resourcesJMap());
  }
}
