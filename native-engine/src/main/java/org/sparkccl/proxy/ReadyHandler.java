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
}
