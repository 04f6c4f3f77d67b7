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
 * <p>{@code auto} is decided once the ranks have met ({@link #settle}): until then, and wherever
 * the cores do not cover the polling threads, it is {@code backoff}; otherwise {@code spin}.
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

  /** What {@code auto} settled on: spin (true) or back off; false until it settles. */
  private volatile boolean autoSpins;

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

  /** The configured mode, {@code AUTO} included. */
  public IdleMode mode() {
    return mode;
  }

  /**
   * What waits on work in flight do now: {@code AUTO} resolved to {@code SPIN} or {@code BACKOFF}.
   */
  public IdleMode effectiveMode() {
    if (mode != IdleMode.AUTO) {
      return mode;
    }
    return autoSpins ? IdleMode.SPIN : IdleMode.BACKOFF;
  }

  /**
   * Settles {@code auto} for {@code ranksOnHost} ranks of {@code threadsPerRank} polling threads
   * each on {@code cores} cores ({@link AutoIdle}); other modes ignore it.
   *
   * @return the mode waits on work in flight follow from now on
   */
  public IdleMode settle(int ranksOnHost, int threadsPerRank, int cores) {
    autoSpins = mode == IdleMode.AUTO && AutoIdle.spins(ranksOnHost, threadsPerRank, cores);
    return effectiveMode();
  }

  boolean spinning() {
    return autoSpins;
  }

  /** For a wait on work in flight: never blocks in spin mode. */
  public IdleStrategy inFlight(int spins) {
    return switch (mode) {
      case SPIN -> new SpinIdleStrategy(windowNanos, clock, pause);
      case PARK -> ParkIdleStrategy.INSTANCE;
      case BACKOFF -> new BackoffIdleStrategy(spins, windowNanos, clock, pause);
      case AUTO ->
          new SwitchingIdleStrategy(
              this,
              new SpinIdleStrategy(windowNanos, clock, pause),
              new BackoffIdleStrategy(spins, windowNanos, clock, pause));
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
    return switch (mode) {
      case SPIN -> new SpinIdleStrategy(0, clock, pause);
      case AUTO ->
          new SwitchingIdleStrategy(
              this, new SpinIdleStrategy(0, clock, pause), ParkIdleStrategy.INSTANCE);
      default -> ParkIdleStrategy.INSTANCE;
    };
  }

  @Override
  public String toString() {
    String settled = mode == IdleMode.AUTO ? ": " + effectiveMode() : "";
    return mode + settled + " (window " + TimeUnit.NANOSECONDS.toMicros(windowNanos) + " us)";
  }
}
