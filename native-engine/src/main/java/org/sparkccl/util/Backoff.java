package org.sparkccl.util;

import java.util.function.BooleanSupplier;

/**
 * The first, cheap phase of every wait in the engine: spin a few times, then yield the CPU for a
 * bounded time. Waking a parked thread can cost 30 us on the 2-core machines we measured (a
 * park/unpark round trip takes 2 us or 57 us: bench/micro/WakeUpCost.java), more than a whole hop
 * of a small collective, so threads that expect an answer soon yield instead of parking. Yielding,
 * unlike spinning, lets the thread they wait for run on a shared core. After the window the caller
 * parks.
 *
 * <p>The window is {@code sparkccl.yieldNanos} (default 200 us).
 */
public final class Backoff {
  public static final long YIELD_NANOS = Long.getLong("sparkccl.yieldNanos", 200_000);
  private static final int SPINS = 64;

  private Backoff() {}

  /** Returns true as soon as {@code ready} holds, false if the window passed without it. */
  public static boolean briefly(BooleanSupplier ready) {
    for (int i = 0; i < SPINS; i++) {
      if (ready.getAsBoolean()) {
        return true;
      }
      Thread.onSpinWait();
    }
    long start = System.nanoTime();
    while (System.nanoTime() - start < YIELD_NANOS) {
      if (ready.getAsBoolean()) {
        return true;
      }
      Thread.yield();
    }
    return ready.getAsBoolean();
  }
}
