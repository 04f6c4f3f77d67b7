package org.sparkccl.memory;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.sparkccl.device.DeviceBuffer;

/**
 * The typed copies of {@link DeviceBuffer} ({@code copyFromHost(float[], long)} and the like),
 * written once for every element type and every device: the elements go through a native-order
 * staging buffer of at most {@value #STAGING_BYTES} bytes, chunk by chunk, so the bytes on the
 * device are the machine's own and the staging never grows with the array.
 */
public final class ArrayCopies {
  static final int STAGING_BYTES = 1 << 20;

  private ArrayCopies() {}

  /** Moves {@code count} elements between an array, from index {@code from}, and a staging view. */
  @FunctionalInterface
  public interface Elements {
    void move(ByteBuffer staging, int from, int count);
  }

  /**
   * Copies {@code length} elements of {@code elementBytes} each to {@code dst} at byte {@code
   * offset}; {@code fill} puts elements into the staging buffer.
   */
  public static void toDevice(
      DeviceBuffer dst, long offset, int length, int elementBytes, Elements fill) {
    check(dst, offset, length, elementBytes);
    ByteBuffer staging = staging(length, elementBytes);
    int perChunk = staging.capacity() / elementBytes;
    for (int i = 0; i < length; i += perChunk) {
      int n = Math.min(perChunk, length - i);
      staging.clear().limit(n * elementBytes);
      fill.move(staging, i, n);
      staging.position(0).limit(n * elementBytes);
      dst.copyFromHost(staging, offset + (long) i * elementBytes);
    }
  }

  /**
   * Copies {@code length} elements of {@code elementBytes} each from {@code src} at byte {@code
   * offset}; {@code drain} takes elements out of the staging buffer.
   */
  public static void toHost(
      DeviceBuffer src, long offset, int length, int elementBytes, Elements drain) {
    check(src, offset, length, elementBytes);
    ByteBuffer staging = staging(length, elementBytes);
    int perChunk = staging.capacity() / elementBytes;
    for (int i = 0; i < length; i += perChunk) {
      int n = Math.min(perChunk, length - i);
      staging.clear().limit(n * elementBytes);
      src.copyToHost(offset + (long) i * elementBytes, staging);
      staging.position(0).limit(n * elementBytes);
      drain.move(staging, i, n);
    }
  }

  /** Refuses a copy that does not fit before any byte moves, so a failed copy changes nothing. */
  private static void check(DeviceBuffer b, long offset, int length, int elementBytes) {
    long bytes = (long) length * elementBytes;
    if (offset < 0 || offset > b.byteSize() - bytes) {
      throw new IndexOutOfBoundsException(
          "offset="
              + offset
              + " and "
              + length
              + " elements of "
              + elementBytes
              + " bytes are outside a buffer of "
              + b.byteSize()
              + " bytes");
    }
  }

  private static ByteBuffer staging(int length, int elementBytes) {
    int bytes = (int) Math.min(STAGING_BYTES, Math.max(elementBytes, (long) length * elementBytes));
    return ByteBuffer.allocateDirect(bytes).order(ByteOrder.nativeOrder());
  }
}
