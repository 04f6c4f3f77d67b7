package org.sparkccl.idle;

import java.util.function.LongSupplier;

/**
 * Spin a few passes, then yield for a bounded window, then block (mode {@code backoff}, and {@code
 * auto} where the cores do not cover the polling threads). Waking a blocked thread costs 2 us or 57
 * us on the 2-core machines we measured ({@code bench/micro/WakeUpCost.java}), more than a whole
 * hop of a small collective, so a thread that expects an answer soon yields first; yielding, unlike
 * spinning, lets the thread it waits for run on a shared core. The window begins at the first pass
 * after the spins.
 */
final class BackoffIdleStrategy implements IdleStrategy {
  private final int spins;
  private final long windowNanos;
  private final LongSupplier clock;
  private final Pause pause;
  private int spun;
  private boolean yielding;
  private boolean blocking;
  private long yieldStart;

  BackoffIdleStrategy(int spins, long windowNanos, LongSupplier clock, Pause pause) {
    if (spins < 0 || windowNanos < 0) {
      throw new IllegalArgumentException(
          "spins=" + spins + ", windowNanos=" + windowNanos + ": expected both >= 0");
    }
    this.spins = spins;
    this.windowNanos = windowNanos;
    this.clock = clock;
    this.pause = pause;
  }

  @Override
  public void reset() {
    spun = 0;
    yielding = false;
    blocking = false;
  }

  @Override
  public boolean idle(int workCount) {
    if (blocking) {
      return true;
    }
    if (spun < spins) {
      spun++;
      if (workCount == 0) {
        pause.spin();
      }
      return false;
    }
    long now = clock.getAsLong();
    if (!yielding) {
      yielding = true;
      yieldStart = now;
    }
    if (now - yieldStart < windowNanos) {
      if (workCount == 0) {
        pause.yieldCpu();
      }
      return false;
    }
    blocking = true;
    return true;
  }

  @Override
  public boolean mayBlock() {
    return true;
  }
}
