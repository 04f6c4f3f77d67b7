package org.sparkccl.idle;

import java.util.function.LongSupplier;

/**
 * Busy-poll and never block (mode {@code spin}): the lowest hand-off latency, one core per waiting
 * thread. After the window the caller's blocking step still comes due, so that what a stalled wait
 * must do (checking its deadline, announcing a call) still happens, but {@link #mayBlock} is false:
 * the step only polls.
 */
final class SpinIdleStrategy implements IdleStrategy {
  private final long windowNanos;
  private final LongSupplier clock;
  private final Pause pause;
  private boolean started;
  private boolean stalled;
  private long start;

  SpinIdleStrategy(long windowNanos, LongSupplier clock, Pause pause) {
    this.windowNanos = windowNanos;
    this.clock = clock;
    this.pause = pause;
  }

  @Override
  public void reset() {
    started = false;
    stalled = false;
  }

  @Override
  public boolean idle(int workCount) {
    if (workCount == 0) {
      pause.spin();
    }
    if (stalled) {
      return true;
    }
    long now = clock.getAsLong();
    if (!started) {
      started = true;
      start = now;
    }
    stalled = now - start >= windowNanos;
    return stalled;
  }

  @Override
  public boolean mayBlock() {
    return false;
  }
}
