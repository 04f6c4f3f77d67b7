package org.sparkccl.device;

/**
 * Whether a buffer is closed, and how many collectives still use it: the bookkeeping every
 * {@link DeviceBuffer} shares, so that {@code close()} can refuse to free memory a kernel still
 * touches.
 */
public final class BufferUse {
  private volatile boolean closed;
  private int users;

  public boolean isClosed() {
    return closed;
  }

  /** @throws IllegalStateException when the buffer is closed */
  public void checkOpen() {
    if (closed) {
      throw new IllegalStateException("buffer is closed");
    }
  }

  /** {@link DeviceBuffer#retain()}. */
  public synchronized void retain() {
    checkOpen();
    users++;
  }

  /** {@link DeviceBuffer#release()}. */
  public synchronized void release() {
    users--;
  }

  /**
   * Runs {@code free} on the first close; later closes do nothing.
   *
   * @throws IllegalStateException while a collective still uses the buffer
   */
  public synchronized void close(Runnable free) {
    if (users > 0) {
      throw new IllegalStateException(
          "buffer is in use by " + users + " unfinished collective(s); wait for them first");
    }
    if (!closed) {
      closed = true;
      free.run();
    }
  }
}
