package org.sparkccl.proxy;

/**
 * A unit of proxy work, as NCCL's {@code ncclProxyArgs}: the proxy thread calls {@link #progress}
 * until {@link #isDone}. Operations on the same connection run one after the other through {@link
 * #nextPeer}, in the order they were submitted.
 */
public abstract class ProxyOp {
  ProxyOp next;
  ProxyOp nextPeer;

  /** The operation submitted before (on the stack) or after (once taken) this one. */
  ProxyOp nextSubmitted;

  /** Set by the proxy once it unlinked the finished operation and will not touch it again. */
  private volatile boolean unlinked;

  /**
   * Whether the proxy is done with this operation for good (finished and unlinked), so that its
   * owner may {@code restart} it for another collective instead of making a new one.
   */
  public final boolean isUnlinked() {
    return unlinked;
  }

  final void markUnlinked() {
    unlinked = true;
  }

  /** Before a restarted operation is submitted again. */
  final void clearUnlinked() {
    unlinked = false;
  }

  /** Operations with equal keys share a connection and must run in order. */
  public abstract Object peerKey();

  /**
   * Does whatever can be done now without blocking.
   *
   * @param nowNanos the proxy's clock
   * @return whether anything moved
   * @throws org.sparkccl.CclException on a transport failure or a stall past the timeout
   */
  public abstract boolean progress(long nowNanos);

  public abstract boolean isDone();

  /**
   * Whether only the proxy thread may move this operation: its transport's progress belongs to that
   * thread ({@code ProxyThread#setOwnedPoller}; a UCX worker), so an assisting kernel leaves it.
   */
  boolean needsTransportOwner() {
    return false;
  }

  /**
   * What the operation does, for error messages ("rank 1: allReduce #3 ...: sending to rank 2").
   */
  public abstract String what();
}
