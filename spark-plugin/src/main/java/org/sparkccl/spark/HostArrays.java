package org.sparkccl.spark;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.sparkccl.device.Device;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostBuffer;

/**
 * Copies Java arrays into device buffers and back, through a small native-order window, so the
 * same code serves host memory and GPU memory (whose buffers only copy to and from host). Float
 * arrays and host buffers, the main job's case, take one direct copy instead.
 */
final class HostArrays {
  private static final int WINDOW_BYTES = 1 << 20;

  private HostArrays() {}

  static DeviceBuffer toBuffer(float[] a, Device device) {
    DeviceBuffer buf = device.allocate(4L * a.length);
    if (buf instanceof HostBuffer host) { // host memory: one copy, no window
      host.memory().asFloatBuffer().put(0, a);
      return buf;
    }
    ByteBuffer window = window(4L * a.length);
    int per = window.capacity() / 4;
    for (int i = 0; i < a.length; i += per) {
      int n = Math.min(per, a.length - i);
      window.clear();
      window.asFloatBuffer().put(a, i, n);
      window.limit(4 * n);
      buf.copyFromHost(window, 4L * i);
    }
    return buf;
  }

  static DeviceBuffer toBuffer(double[] a, Device device) {
    DeviceBuffer buf = device.allocate(8L * a.length);
    ByteBuffer window = window(8L * a.length);
    int per = window.capacity() / 8;
    for (int i = 0; i < a.length; i += per) {
      int n = Math.min(per, a.length - i);
      window.clear();
      window.asDoubleBuffer().put(a, i, n);
      window.limit(8 * n);
      buf.copyFromHost(window, 8L * i);
    }
    return buf;
  }

  static float[] toFloats(DeviceBuffer buf) {
    float[] a = new float[checkedLength(buf, 4)];
    if (buf instanceof HostBuffer host) {
      host.memory().asFloatBuffer().get(0, a);
      return a;
    }
    ByteBuffer window = window(buf.byteSize());
    int per = window.capacity() / 4;
    for (int i = 0; i < a.length; i += per) {
      int n = Math.min(per, a.length - i);
      window.clear().limit(4 * n);
      buf.copyToHost(4L * i, window);
      window.asFloatBuffer().get(a, i, n);
    }
    return a;
  }

  static double[] toDoubles(DeviceBuffer buf) {
    double[] a = new double[checkedLength(buf, 8)];
    ByteBuffer window = window(buf.byteSize());
    int per = window.capacity() / 8;
    for (int i = 0; i < a.length; i += per) {
      int n = Math.min(per, a.length - i);
      window.clear().limit(8 * n);
      buf.copyToHost(8L * i, window);
      window.asDoubleBuffer().get(a, i, n);
    }
    return a;
  }

  private static int checkedLength(DeviceBuffer buf, int elementBytes) {
    long bytes = buf.byteSize();
    if (bytes % elementBytes != 0 || bytes / elementBytes > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException(
          "a buffer of " + bytes + " bytes does not fit a Java array of " + elementBytes
              + "-byte elements");
    }
    return (int) (bytes / elementBytes);
  }

  private static ByteBuffer window(long bytes) {
    int size = (int) Math.max(8, Math.min(WINDOW_BYTES, bytes));
    return ByteBuffer.allocate(size).order(ByteOrder.nativeOrder());
  }
}
