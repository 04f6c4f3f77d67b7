package org.sparkccl.transport;

import org.sparkccl.comm.CollectiveCall;

/** A send or receive in flight on a connection; polled by the proxy thread, never blocks. */
public interface NetRequest {
  /**
   * Moves the request along and says whether it has completed.
   *
   * @throws org.sparkccl.CclException when the connection failed
   */
  boolean test();

  /** Bytes moved; valid once {@link #test()} returned true. */
  int size();

  /**
   * For a receive in flight, after a {@link #test()} that returned false: how many of the payload's
   * first bytes lie in the memory it was posted with and will not change; 0 where the transport
   * cannot say (it receives in parts that may land in any order, or all at once).
   */
  default int received() {
    return 0;
  }

  /**
   * For a completed receive: the collective the sender was running when it sent this, or null where
   * the request carries none.
   */
  default CollectiveCall call() {
    return null;
  }

  /**
   * For a completed receive: whether the sender was running {@code expected} when it sent this (or
   * the request carries no call). Transports that keep the call's bytes compare them in place: a
   * receiver checks every step, and a call made per step was the most a mid-size ring allocated.
   */
  default boolean sentFor(CollectiveCall expected) {
    CollectiveCall got = call();
    return got == null || got.matches(expected);
  }
}
