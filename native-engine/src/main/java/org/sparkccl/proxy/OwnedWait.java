package org.sparkccl.proxy;

/**
 * How an idle proxy that owns a transport's progress blocks until that transport has an event: for
 * UCX, {@code ucp_worker_wait} (which arms the worker and waits on its event file descriptor) and
 * {@code ucp_worker_signal} to end that wait from another thread.
 */
public interface OwnedWait {
  /** Blocks until the transport has an event or {@link #signal()} was called; proxy thread only. */
  void await();

  /** Ends the current or next {@link #await()}; any thread. */
  void signal();

  /**
   * How long {@link #await()} may block at most, in nanoseconds (0: no limit), for a transport that
   * learns some news only by looking: UCX's puts into the announcement board raise no event. The
   * proxy's socket watcher then signals the wait once that long has passed.
   */
  default long periodNanos() {
    return 0;
  }

  /** Ends the current or next {@link #await()} because the period passed; any thread. */
  default void tick() {
    signal();
  }

  /**
   * Whether the last {@link #await()} ended without a {@link #signal()} while a period is set (by
   * {@link #tick()}, or by the transport's own events): a pass that then finds nothing waits again
   * at once, without the idle back-off a wake-up for work gets. Proxy thread only.
   */
  default boolean endedByTick() {
    return false;
  }
}
