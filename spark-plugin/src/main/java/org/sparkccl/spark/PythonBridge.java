package org.sparkccl.spark;

import java.nio.ByteBuffer;
import org.apache.spark.api.java.JavaRDD;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.device.DeviceBuffer;

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
   * reduceScatter}) on an RDD of {@code byte[]} holding arrays of {@code dtype} ({@code float32}
   * or {@code float64}); {@code op} names the reduction, {@code root} the broadcast's partition.
   */
  public static JavaRDD<Object> run(
      JavaRDD<Object> arrays, String collective, String dtype, String op, int root) {
    DataType type = DataType.fromName(dtype);
    if (type != DataType.FLOAT32 && type != DataType.FLOAT64) {
      throw new IllegalArgumentException(
          "dtype=" + dtype + " is not supported from Python; expected float32 or float64");
    }
    JavaRDD<DeviceBuffer> buffers = arrays.map(PythonBridge::toBuffer);
    JavaRDD<DeviceBuffer> result =
        switch (collective) {
          case "allReduce" -> SparkCCL.allReduce(buffers, type, ReduceOp.fromName(op));
          case "broadcast" -> SparkCCL.broadcast(buffers, type, root);
          case "allGather" -> SparkCCL.allGather(buffers, type);
          case "reduceScatter" -> SparkCCL.reduceScatter(buffers, type, ReduceOp.fromName(op));
          default ->
              throw new IllegalArgumentException(
                  "collective=" + collective + " is not one; expected allReduce, broadcast,"
                      + " allGather or reduceScatter");
        };
    return result.map(PythonBridge::toBytes);
  }

  private static DeviceBuffer toBuffer(Object a) {
    if (!(a instanceof byte[] bytes)) {
      throw new IllegalArgumentException(
          "an element of type " + (a == null ? "null" : a.getClass().getSimpleName())
              + " reached SparkCCL from Python; expected byte[] (the shim sends array.tobytes())");
    }
    DeviceBuffer buf = SparkBuffers.taskDevice().allocate(bytes.length);
    buf.copyFromHost(ByteBuffer.wrap(bytes), 0);
    return buf;
  }

  private static Object toBytes(DeviceBuffer buf) {
    byte[] bytes = new byte[Math.toIntExact(buf.byteSize())];
    buf.copyToHost(0, ByteBuffer.wrap(bytes));
    buf.close();
    return bytes;
  }
}
