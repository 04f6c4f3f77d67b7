package org.sparkccl.config;

/**
 * What a waiting thread (kernel, proxy, helper) does while it has nothing to do (key {@code idle}).
 */
public enum IdleMode {
  /** Busy-poll: lowest latency, one core per waiting thread. */
  SPIN,
  /** Spin briefly, then yield for a bounded window, then park. The default. */
  BACKOFF,
  /** Park at once: least CPU, highest hand-off latency. */
  PARK,
  /**
   * {@code SPIN} when the cores cover the polling threads of every rank of the communicator on this
   * host, else {@code BACKOFF}; decided once the ranks have met.
   */
  AUTO;

  @Override
  public String toString() {
    return Values.lowerName(this);
  }
}
