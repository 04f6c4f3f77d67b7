package org.sparkccl.comm;

import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.device.Device;
import org.sparkccl.device.DeviceBuffer;

/**
 * Checks of collective arguments: each failure is an {@link IllegalArgumentException} that says
 * what was wrong and what was expected.
 */
public final class Arguments {
  private Arguments() {}

  public static void checkDtype(DataType dtype) {
    if (dtype == null) {
      throw new IllegalArgumentException("dtype is null; expected one of " + DataType.names());
    }
  }

  public static void checkOp(DataType dtype, ReduceOp op) {
    checkDtype(dtype);
    if (op == null) {
      throw new IllegalArgumentException("op is null; expected sum, prod, min, max or avg");
    }
    if (!op.supports(dtype)) {
      throw new IllegalArgumentException(
          "op="
              + op
              + " is not defined for dtype="
              + dtype
              + "; expected a floating-point dtype (float16, bfloat16, float32, float64)");
    }
  }

  public static void checkRoot(int root, int nRanks) {
    if (root < 0 || root >= nRanks) {
      throw new IllegalArgumentException(
          "root=" + root + " is out of range; expected 0.." + (nRanks - 1));
    }
  }

  /** {@code count x nRanks}, for buffers that hold one block per rank. */
  public static long multiply(long count, int nRanks, String name) {
    if (count < 0) {
      throw new IllegalArgumentException(
          name + "=" + count + " is negative; expected " + name + " >= 0");
    }
    try {
      return Math.multiplyExact(count, nRanks);
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException(name + "=" + count + " x " + nRanks + " ranks overflows");
    }
  }

  /** The buffer, if it is open, on the communicator's device and large enough. */
  public static DeviceBuffer buffer(
      String name, DeviceBuffer b, long count, DataType dtype, Device device) {
    if (b == null) {
      throw new IllegalArgumentException(name + " buffer is null; expected a DeviceBuffer");
    }
    if (b.isClosed()) {
      throw new IllegalArgumentException(name + " buffer is closed; expected an open buffer");
    }
    if (b.device() != device) {
      throw new IllegalArgumentException(
          name
              + " buffer is on "
              + b.device().name()
              + "; this communicator runs on "
              + device.name()
              + " (setting device)");
    }
    if (count < 0) {
      throw new IllegalArgumentException("count=" + count + " is negative; expected count >= 0");
    }
    if (count > b.byteSize() / dtype.size()) {
      throw new IllegalArgumentException(
          "count="
              + count
              + " of "
              + dtype
              + " ("
              + dtype.size()
              + " bytes each) needs "
              + count * dtype.size()
              + " bytes but the "
              + name
              + " buffer holds "
              + b.byteSize()
              + " bytes");
    }
    return b;
  }
}
