package org.sparkccl.proxy;

import org.sparkccl.CclTimeoutException;

/** Tracks when an operation last moved and fails it once it has waited on the network too long. */
final class StallClock {
  private final long timeoutNanos;
  private long lastMove = Long.MIN_VALUE;

  StallClock(long timeoutNanos) {
    this.timeoutNanos = timeoutNanos;
  }

  /** A new operation begins (a reused one). */
  void reset() {
    lastMove = Long.MIN_VALUE;
  }

  void moved(long now) {
    lastMove = now;
  }

  /** Call when the operation waits on the network; throws past the timeout. */
  void check(long now) {
    if (lastMove == Long.MIN_VALUE) {
      lastMove = now;
    } else if (now - lastMove > timeoutNanos) {
      throw new CclTimeoutException(
          "no progress for "
              + (now - lastMove) / 1_000_000
              + " ms (timeout "
              + timeoutNanos / 1_000_000
              + " ms)");
    }
  }
}
