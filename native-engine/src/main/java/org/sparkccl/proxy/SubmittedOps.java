package org.sparkccl.proxy;

import java.util.concurrent.atomic.AtomicReference;

/**
 * The operations kernels hand a proxy thread, linked through the operations themselves ({@link
 * ProxyOp#nextSubmitted}): many threads push, the proxy thread takes all of them at once, oldest
 * first. A {@code ConcurrentLinkedQueue} made a node per submission, about 100 bytes of garbage per
 * small collective and rank; here a submission allocates nothing. An operation is pushed again only
 * after the proxy unlinked it, so it is never on the stack twice.
 */
final class SubmittedOps {
  /** The newest submission; each links to the one before it. */
  private final AtomicReference<ProxyOp> top = new AtomicReference<>();

  /** Pushes {@code op}; any thread. */
  void push(ProxyOp op) {
    ProxyOp before;
    do {
      before = top.get();
      op.nextSubmitted = before; // published by the compare-and-set below
    } while (!top.compareAndSet(before, op));
  }

  /**
   * Takes every submission so far, oldest first, linked through {@link ProxyOp#nextSubmitted}; null
   * when there is none. The proxy thread only.
   */
  ProxyOp takeAll() {
    ProxyOp newest = top.getAndSet(null);
    ProxyOp oldest = null;
    while (newest != null) { // reverse the stack into submission order
      ProxyOp before = newest.nextSubmitted;
      newest.nextSubmitted = oldest;
      oldest = newest;
      newest = before;
    }
    return oldest;
  }

  boolean isEmpty() {
    return top.get() == null;
  }
}
