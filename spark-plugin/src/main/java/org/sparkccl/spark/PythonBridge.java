package org.sparkccl.spark;

import org.apache.spark.api.java.JavaRDD;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import scala.reflect.ClassTag$;

/**
 * The entry points of the PySpark shim ({@code python-shim/sparkccl}). Python arrays travel as
 * their raw bytes in the machine's order ({@code array.tobytes()}, which PySpark's pickling turns
 * into {@code byte[]}), each copied into a device buffer as it is; results go back the same way.
 * Bytes rather than typed arrays, because the pickled form of a Java {@code float[]} does not load
 * in Python 3.
 */
public final class PythonBridge {
  private PythonBridge() {}

  /**
   * Runs {@code collective} ({@code allReduce}, {@code broadcast}, {@code allGather} or {@code
   * reduceScatter}) on an RDD of {@code byte[]} holding arrays of {@code dtype} ({@code float32} or
   * {@code float64}); {@code op} names the reduction, {@code root} the broadcast's partition.
   */
  public static JavaRDD<byte[]> run(
      JavaRDD<byte[]> arrays, String collective, String dtype, String op, int root) {
    DataType type = DataType.fromName(dtype);
    if (type != DataType.FLOAT32 && type != DataType.FLOAT64) {
      throw new IllegalArgumentException(
          "dtype=" + dtype + " is not supported from Python; expected float32 or float64");
    }
    CollectiveSpec.Kind kind =
        switch (collective) {
          case "allReduce" -> CollectiveSpec.Kind.ALL_REDUCE;
          case "broadcast" -> CollectiveSpec.Kind.BROADCAST;
          case "allGather" -> CollectiveSpec.Kind.ALL_GATHER;
          case "reduceScatter" -> CollectiveSpec.Kind.REDUCE_SCATTER;
          default ->
              throw new IllegalArgumentException(
                  "collective="
                      + collective
                      + " is not one; expected allReduce, broadcast,"
                      + " allGather or reduceScatter");
        };
    ReduceOp reduce =
        kind == CollectiveSpec.Kind.ALL_REDUCE || kind == CollectiveSpec.Kind.REDUCE_SCATTER
            ? ReduceOp.fromName(op)
            : null;
    return JavaRDD.fromRDD(
        SparkCCL.runOnArrays(
            arrays.rdd(),
            new CollectiveSpec(kind, type, reduce, root),
            HostArrays::toBuffer,
            HostArrays::toBytes,
            ClassTag$.MODULE$.apply(byte[].class)),
        ClassTag$.MODULE$.apply(byte[].class));
  }
}
