package org.sparkccl.proxy;

/**
 * Attached to a socket registered with the proxy's selector: called on the proxy thread, in a
 * progress pass, when the socket is ready although no operation is waiting on it (a peer's failure
 * notice, a peer that died while this rank was idle).
 */
public interface ReadyHandler {
  /**
   * Handles the readiness without blocking.
   *
   * @throws org.sparkccl.CclException when it reveals a failure
   */
  void onReady();

  /**
   * Whether {@link #onReady} needs a progress pass (the lock that keeps operations and connections
   * to one thread at a time). A handler that reads what no operation touches (a ring connection's
   * announcements, against the data's direction) runs without it, on the proxy thread, so that a
   * kernel assisting meanwhile keeps moving its data; a failure it throws is reported by the next
   * pass.
   */
  default boolean runsInPass() {
    return true;
  }
}
