package org.sparkccl.device;

import java.nio.ByteBuffer;

/**
 * Memory that collectives read and write: off-heap host memory ({@link HostBuffer}) or GPU memory
 * ({@code org.sparkccl.device.cuda.CudaBuffer}). Code above the kernels only moves data through
 * these methods and never assumes host memory.
 *
 * <pre>{@code
 * try (DeviceBuffer buf = HostDevice.INSTANCE.allocate(1024 * 4)) {
 *   buf.copyFromHost(ByteBuffer.allocateDirect(4096), 0);
 *   communicator.allReduce(buf, buf, 1024, DataType.FLOAT32, ReduceOp.SUM);
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

  /** Copies {@code src.remaining()} bytes from host memory to this buffer at {@code offset}. */
  void copyFromHost(ByteBuffer src, long offset);

  /** Copies {@code dst.remaining()} bytes from this buffer at {@code offset} into {@code dst}. */
  void copyToHost(long offset, ByteBuffer dst);

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
