package org.sparkccl.spark;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.sparkccl.device.Device;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostBuffer;

/**
 * Copies Java arrays into device buffers and back, through a small native-order window, so the same
 * code serves host memory and GPU memory (whose buffers only copy to and from host). Float arrays
 * and host buffers, the main job's case, take one direct copy instead.
 */
final class HostArrays {
  private static final int WINDOW_BYTES = 1 << 20;

  /** Moves elements {@code [from, from + n)} of an array into or out of the window. */
  private interface WindowStep {
    void apply(ByteBuffer window, int from, int n);
  }

  private HostArrays() {}

  static DeviceBuffer toBuffer(float[] a, Device device) {
    DeviceBuffer buf = device.allocate(4L * a.length);
    if (buf instanceof HostBuffer host) { // host memory: one copy, no window
      host.memory().asFloatBuffer().put(0, a);
      return buf;
    }
    return copyIn(buf, a.length, 4, (w, from, n) -> w.asFloatBuffer().put(a, from, n));
  }

  static DeviceBuffer toBuffer(double[] a, Device device) {
    DeviceBuffer buf = device.allocate(8L * a.length);
    return copyIn(buf, a.length, 8, (w, from, n) -> w.asDoubleBuffer().put(a, from, n));
  }

  /** A buffer of the raw bytes (in the machine's order) of an array. */
  static DeviceBuffer toBuffer(byte[] bytes, Device device) {
    DeviceBuffer buf = device.allocate(bytes.length);
    try {
      buf.copyFromHost(ByteBuffer.wrap(bytes).order(ByteOrder.nativeOrder()), 0);
      return buf;
    } catch (RuntimeException e) {
      buf.close();
      throw e;
    }
  }

  static byte[] toBytes(DeviceBuffer buf) {
    byte[] bytes = new byte[Math.toIntExact(buf.byteSize())];
    buf.copyToHost(0, ByteBuffer.wrap(bytes).order(ByteOrder.nativeOrder()));
    return bytes;
  }

  static float[] toFloats(DeviceBuffer buf) {
    float[] a = new float[checkedLength(buf, 4)];
    if (buf instanceof HostBuffer host) {
      host.memory().asFloatBuffer().get(0, a);
      return a;
    }
    copyOut(buf, a.length, 4, (w, from, n) -> w.asFloatBuffer().get(a, from, n));
    return a;
  }

  static double[] toDoubles(DeviceBuffer buf) {
    double[] a = new double[checkedLength(buf, 8)];
    copyOut(buf, a.length, 8, (w, from, n) -> w.asDoubleBuffer().get(a, from, n));
    return a;
  }

  /** Fills {@code buf} through the window; closes it if a copy fails. */
  private static DeviceBuffer copyIn(
      DeviceBuffer buf, int length, int elementBytes, WindowStep fill) {
    try {
      ByteBuffer window = window((long) length * elementBytes);
      int per = window.capacity() / elementBytes;
      for (int i = 0; i < length; i += per) {
        int n = Math.min(per, length - i);
        window.clear();
        fill.apply(window, i, n);
        window.limit(n * elementBytes);
        buf.copyFromHost(window, (long) i * elementBytes);
      }
      return buf;
    } catch (RuntimeException e) {
      buf.close();
      throw e;
    }
  }

  private static void copyOut(DeviceBuffer buf, int length, int elementBytes, WindowStep drain) {
    ByteBuffer window = window((long) length * elementBytes);
    int per = window.capacity() / elementBytes;
    for (int i = 0; i < length; i += per) {
      int n = Math.min(per, length - i);
      window.clear().limit(n * elementBytes);
      buf.copyToHost((long) i * elementBytes, window);
      drain.apply(window, i, n);
    }
  }

  private static int checkedLength(DeviceBuffer buf, int elementBytes) {
    long bytes = buf.byteSize();
    if (bytes % elementBytes != 0 || bytes / elementBytes > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException(
          "a buffer of "
              + bytes
              + " bytes does not fit a Java array of "
              + elementBytes
              + "-byte elements");
    }
    return (int) (bytes / elementBytes);
  }

  private static ByteBuffer window(long bytes) {
    int size = (int) Math.max(8, Math.min(WINDOW_BYTES, bytes));
    return ByteBuffer.allocate(size).order(ByteOrder.nativeOrder());
  }
}
