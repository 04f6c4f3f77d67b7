package org.sparkccl.device;

import java.nio.ByteBuffer;
import org.sparkccl.memory.ArrayCopies;

/**
 * Memory that collectives read and write: off-heap host memory ({@link HostBuffer}) or GPU memory
 * ({@code org.sparkccl.device.cuda.CudaBuffer}). Code above the kernels only moves data through
 * these methods and never assumes host memory.
 *
 * <pre>{@code
 * try (DeviceBuffer buf = HostDevice.INSTANCE.allocate(1024 * 4)) {
 *   buf.copyFromHost(myFloats, 0); // float[1024]
 *   communicator.allReduce(buf, buf, 1024, DataType.FLOAT32, ReduceOp.SUM);
 *   buf.copyToHost(0, myFloats);
 * }
 * }</pre>
 */
public interface DeviceBuffer extends AutoCloseable {
  /** The device this memory lives on. */
  Device device();

  /** Size in bytes. */
  long byteSize();

  /** True once {@link #close()} was called (the memory may outlive it while a collective runs). */
  boolean isClosed();

  /**
   * Copies {@code src.remaining()} bytes from host memory to this buffer at byte {@code offset}.
   *
   * @throws IllegalArgumentException when {@code src} is not in the machine's byte order ({@code
   *     ByteOrder.nativeOrder()}): its numbers would reach collectives with their bytes reversed
   * @throws IndexOutOfBoundsException when the bytes do not fit at {@code offset}
   */
  void copyFromHost(ByteBuffer src, long offset);

  /**
   * Copies {@code dst.remaining()} bytes from this buffer at byte {@code offset} into {@code dst}.
   *
   * @throws IllegalArgumentException when {@code dst} is not in the machine's byte order
   * @throws IndexOutOfBoundsException when the bytes do not fit at {@code offset}
   */
  void copyToHost(long offset, ByteBuffer dst);

  /** Copies all of {@code src} to this buffer at byte {@code offset}, in the machine's order. */
  default void copyFromHost(float[] src, long offset) {
    ArrayCopies.toDevice(
        this, offset, src.length, Float.BYTES, (b, from, n) -> b.asFloatBuffer().put(src, from, n));
  }

  /** Copies all of {@code src} to this buffer at byte {@code offset}, in the machine's order. */
  default void copyFromHost(double[] src, long offset) {
    ArrayCopies.toDevice(
        this,
        offset,
        src.length,
        Double.BYTES,
        (b, from, n) -> b.asDoubleBuffer().put(src, from, n));
  }

  /** Copies all of {@code src} to this buffer at byte {@code offset}, in the machine's order. */
  default void copyFromHost(int[] src, long offset) {
    ArrayCopies.toDevice(
        this, offset, src.length, Integer.BYTES, (b, from, n) -> b.asIntBuffer().put(src, from, n));
  }

  /** Copies all of {@code src} to this buffer at byte {@code offset}, in the machine's order. */
  default void copyFromHost(long[] src, long offset) {
    ArrayCopies.toDevice(
        this, offset, src.length, Long.BYTES, (b, from, n) -> b.asLongBuffer().put(src, from, n));
  }

  /**
   * Copies all of {@code src} to this buffer at byte {@code offset}, in the machine's order (for
   * {@code FLOAT16} and {@code BFLOAT16}, the raw 16-bit patterns).
   */
  default void copyFromHost(short[] src, long offset) {
    ArrayCopies.toDevice(
        this, offset, src.length, Short.BYTES, (b, from, n) -> b.asShortBuffer().put(src, from, n));
  }

  /** Fills all of {@code dst} from this buffer at byte {@code offset}. */
  default void copyToHost(long offset, float[] dst) {
    ArrayCopies.toHost(
        this, offset, dst.length, Float.BYTES, (b, from, n) -> b.asFloatBuffer().get(dst, from, n));
  }

  /** Fills all of {@code dst} from this buffer at byte {@code offset}. */
  default void copyToHost(long offset, double[] dst) {
    ArrayCopies.toHost(
        this,
        offset,
        dst.length,
        Double.BYTES,
        (b, from, n) -> b.asDoubleBuffer().get(dst, from, n));
  }

  /** Fills all of {@code dst} from this buffer at byte {@code offset}. */
  default void copyToHost(long offset, int[] dst) {
    ArrayCopies.toHost(
        this, offset, dst.length, Integer.BYTES, (b, from, n) -> b.asIntBuffer().get(dst, from, n));
  }

  /** Fills all of {@code dst} from this buffer at byte {@code offset}. */
  default void copyToHost(long offset, long[] dst) {
    ArrayCopies.toHost(
        this, offset, dst.length, Long.BYTES, (b, from, n) -> b.asLongBuffer().get(dst, from, n));
  }

  /** Fills all of {@code dst} from this buffer at byte {@code offset}. */
  default void copyToHost(long offset, short[] dst) {
    ArrayCopies.toHost(
        this, offset, dst.length, Short.BYTES, (b, from, n) -> b.asShortBuffer().get(dst, from, n));
  }

  /**
   * Copies {@code length} bytes from {@code src} at {@code srcOffset} to this buffer at {@code
   * offset}, on the device. For the engine's own copies: it works on a buffer closed while its
   * collective still holds it.
   *
   * @throws IllegalArgumentException when {@code src} lives on another device
   */
  void copyFrom(DeviceBuffer src, long srcOffset, long offset, long length);

  /**
   * Marks the buffer as used by a collective until {@link #release()}, so that {@link #close()}
   * cannot free memory a kernel is still touching. For the engine; users need not call it.
   *
   * @throws IllegalStateException when the buffer is already closed
   */
  void retain();

  /** Ends one {@link #retain()}. */
  void release();

  /**
   * Releases the memory; idempotent. A buffer closed while a collective still uses it is freed when
   * that collective lets go, so closing after a failure never pulls memory from a kernel.
   */
  @Override
  void close();
}
