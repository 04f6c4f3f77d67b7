package org.sparkccl.idle;

import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.IdleMode;
import org.sparkccl.config.Key;

/**
 * Makes the {@link IdleStrategy} of each waiting thread of a communicator from the {@code idle} key
 * (its mode) and {@code idle.yieldUs} (how long a wait counts as brief). A wait site chooses its
 * own spin count: how many passes it spins before it yields.
 *
 * <p>Two kinds of wait. A wait for work in flight (a kernel for its FIFO, the proxy for its
 * operations, a caller for its collective) follows the mode. A wait for new work (a kernel between
 * collectives, a proxy with no operation) backs off in spin mode too: a thread with nothing to do
 * need not hold a core, and a thread that spins through a whole Spark stage would.
 *
 * <pre>{@code
 * IdleStrategy kernelWait = IdleStrategies.of(config).inFlight(0);
 * }</pre>
 */
public final class IdleStrategies {
  private final IdleMode mode;
  private final long windowNanos;
  private final LongSupplier clock;
  private final Pause pause;

  /** {@code mode} with a brief phase of {@code windowNanos}. */
  public IdleStrategies(IdleMode mode, long windowNanos) {
    this(mode, windowNanos, System::nanoTime, Pause.THREAD);
  }

  IdleStrategies(IdleMode mode, long windowNanos, LongSupplier clock, Pause pause) {
    if (windowNanos < 0) {
      throw new IllegalArgumentException("windowNanos=" + windowNanos + ": expected >= 0");
    }
    this.mode = Objects.requireNonNull(mode, "mode");
    this.windowNanos = windowNanos;
    this.clock = clock;
    this.pause = pause;
  }

  /** The strategies {@code config} asks for. */
  public static IdleStrategies of(CclConfig config) {
    return new IdleStrategies(config.idle(), TimeUnit.MICROSECONDS.toNanos(config.idleYieldUs()));
  }

  /** The defaults of {@link Key#IDLE} and {@link Key#IDLE_YIELD_US}. */
  public static IdleStrategies defaults() {
    return of(CclConfig.builder().build());
  }

  public IdleMode mode() {
    return mode;
  }

  /** For a wait on work in flight: never blocks in spin mode. */
  public IdleStrategy inFlight(int spins) {
    return switch (mode) {
      case SPIN -> new SpinIdleStrategy(windowNanos, clock, pause);
      case PARK -> ParkIdleStrategy.INSTANCE;
      case BACKOFF -> new BackoffIdleStrategy(spins, windowNanos, clock, pause);
    };
  }

  /** For a wait on new work: backs off in spin mode too. */
  public IdleStrategy forNewWork(int spins) {
    return mode == IdleMode.PARK
        ? ParkIdleStrategy.INSTANCE
        : new BackoffIdleStrategy(spins, windowNanos, clock, pause);
  }

  /**
   * For a thread whose waits all end in an event it can block on (a socket helper's selector sees
   * its sockets become ready): blocks at once except in spin mode, where it polls.
   */
  public IdleStrategy onEvents() {
    return mode == IdleMode.SPIN
        ? new SpinIdleStrategy(0, clock, pause)
        : ParkIdleStrategy.INSTANCE;
  }

  @Override
  public String toString() {
    return mode + " (window " + TimeUnit.NANOSECONDS.toMicros(windowNanos) + " us)";
  }
}
