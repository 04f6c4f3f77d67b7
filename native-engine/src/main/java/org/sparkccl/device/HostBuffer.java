package org.sparkccl.device;

import java.nio.ByteBuffer;

/** A {@link DeviceBuffer} in off-heap host memory, released at {@link #close()}. */
public final class HostBuffer implements DeviceBuffer {
  private final ByteBuffer memory;
  private volatile boolean closed;
  private boolean freed;
  private int users;

  HostBuffer(long bytes) {
    if (bytes < 0 || bytes > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException(
          "bytes=" + bytes + " is out of range; a host buffer holds 0.." + (Integer.MAX_VALUE - 8));
    }
    this.memory = DirectMemory.allocate((int) bytes);
  }

  @Override
  public Device device() {
    return HostDevice.INSTANCE;
  }

  @Override
  public long byteSize() {
    return memory.capacity();
  }

  @Override
  public boolean isClosed() {
    return closed;
  }

  /** The memory itself, native byte order; for host kernels and tests, not for general use. */
  public synchronized ByteBuffer memory() {
    // A collective that still holds the buffer keeps its memory, even after close().
    if (freed) {
      throw new IllegalStateException("buffer is closed");
    }
    return memory;
  }

  @Override
  public void copyFromHost(ByteBuffer src, long offset) {
    checkRange(offset, src.remaining());
    memory.put((int) offset, src, src.position(), src.remaining());
  }

  @Override
  public void copyToHost(long offset, ByteBuffer dst) {
    checkRange(offset, dst.remaining());
    dst.put(dst.position(), memory, (int) offset, dst.remaining());
  }

  private void checkRange(long offset, int length) {
    checkOpen();
    if (offset < 0 || offset + length > memory.capacity()) {
      throw new IndexOutOfBoundsException(
          "offset=" + offset + " length=" + length + " is outside a buffer of "
              + memory.capacity() + " bytes");
    }
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("buffer is closed");
    }
  }

  /**
   * Marks the buffer as used by a collective until {@link #release()}, so that {@link #close()}
   * cannot free memory a kernel is still touching.
   *
   * @throws IllegalStateException when the buffer is already closed
   */
  public synchronized void retain() {
    checkOpen();
    users++;
  }

  /** Ends one {@link #retain()}; frees the memory if {@link #close()} came in the meantime. */
  public synchronized void release() {
    users--;
    if (users == 0 && closed && !freed) {
      free();
    }
  }

  /**
   * Releases the memory; idempotent. While a collective still uses the buffer (a caller gave up
   * on it after a failure, say) the buffer closes at once but its memory is freed only when the
   * collective lets go, so no kernel ever touches freed memory and nothing is left behind.
   */
  @Override
  public synchronized void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (users == 0) {
      free();
    }
  }

  private void free() {
    freed = true;
    DirectMemory.free(memory);
  }

  @Override
  public String toString() {
    return "HostBuffer[" + memory.capacity() + " bytes" + (closed ? ", closed" : "") + "]";
  }
}
