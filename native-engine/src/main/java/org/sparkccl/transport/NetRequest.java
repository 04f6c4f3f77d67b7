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

  /** For a completed receive: the collective the sender was running when it sent this. */
  default CollectiveCall call() {
    return null;
  }
}
