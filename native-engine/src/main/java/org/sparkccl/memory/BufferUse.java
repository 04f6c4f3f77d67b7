package org.sparkccl.memory;

import org.apache.logging.log4j.Logger;
import org.sparkccl.util.EngineLog;

/**
 * Whether a buffer is closed, and how many collectives still use it: the bookkeeping every {@link
 * DeviceBuffer} shares. A buffer closed while a collective still uses it (a caller that gave up
 * after a failure, say) closes at once to new work, but its memory is freed only when the last
 * collective lets go: no kernel ever touches freed memory, and nothing is left behind.
 */
public final class BufferUse {
  private static final Logger LOG = EngineLog.logger(BufferUse.class);

  private volatile boolean closed;
  private volatile boolean freed;
  private int users;
  private Runnable pendingFree;

  public boolean isClosed() {
    return closed;
  }

  /**
   * Checks that the buffer is open, for new work and user copies.
   *
   * @throws IllegalStateException when the buffer is closed
   */
  public void checkOpen() {
    if (closed) {
      throw new IllegalStateException("buffer is closed");
    }
  }

  /**
   * For kernels reaching the memory: valid until it is freed, which a running collective's use
   * postpones past {@code close()}.
   *
   * @throws IllegalStateException when the memory is freed
   */
  public void checkNotFreed() {
    if (freed) {
      throw new IllegalStateException("buffer is closed");
    }
  }

  /** {@link DeviceBuffer#retain()}. */
  public synchronized void retain() {
    checkOpen();
    users++;
  }

  /**
   * {@link DeviceBuffer#release()}: frees the memory if {@code close()} came in the meantime. The
   * free runs outside the lock (freeing GPU memory can wait for kernels) and its failure is logged,
   * not thrown into the collective that happened to finish last.
   */
  public void release() {
    Runnable free;
    synchronized (this) {
      users--;
      if (users != 0 || pendingFree == null) {
        return;
      }
      free = pendingFree;
      pendingFree = null;
      freed = true;
    }
    try {
      free.run();
    } catch (RuntimeException e) {
      LOG.warn("freeing a buffer closed during a collective failed: {}", e.toString());
    }
  }

  /** Runs {@code free} on the first close, or when the last collective lets go; idempotent. */
  public synchronized void close(Runnable free) {
    if (closed) {
      return;
    }
    closed = true;
    if (users == 0) {
      freed = true;
      free.run();
    } else {
      pendingFree = free;
    }
  }
}
