package org.sparkccl.transport.ucx;

/**
 * A one-sided put from this rank's side area into a peer's ({@link UcxLayout} offsets on both):
 * what the announcement board's writer and reader need of UCX, so that both can be tested over
 * plain memory.
 */
@FunctionalInterface
interface SidePut {
  void put(int localOffset, int length, int remoteOffset);
}
