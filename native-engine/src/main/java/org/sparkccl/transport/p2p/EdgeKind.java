package org.sparkccl.transport.p2p;

/**
 * How one ring edge (a sending rank to the next one) moves slots, like NCCL's choice between its
 * {@code p2p}, {@code shm} and {@code net} transports for each peer.
 */
public enum EdgeKind {
  /** The sender's GPU kernel writes straight into the receiver's slots in the receiver's GPU. */
  PEER,
  /**
   * The sender's kernel writes the slots into shared pinned host memory, the receiver's kernel
   * reads them from there: one trip over each GPU's link, no proxy.
   */
  SHM,
  /** The proxies move the slots over the network transport (UCX or sockets). */
  NET;

  /** Whether the kernels talk without the proxy. */
  public boolean direct() {
    return this != NET;
  }

  /**
   * The kind of the edge from {@code sender} to {@code receiver}: direct when both run on one host
   * with kernels that can share FIFOs (both GPU kernels, or both host-memory kernels), peer when
   * the sender can also write into the receiver's GPU and both allow it ({@code p2p=auto}).
   *
   * @param senderReachesReceiver whether the sender's GPU can write into the receiver's (the same
   *     GPU, or {@code cuDeviceCanAccessPeer}), as the sender found
   */
  public static EdgeKind of(
      SameHostInfo sender, SameHostInfo receiver, boolean senderReachesReceiver) {
    if (sender.deviceId().isEmpty()
        || receiver.deviceId().isEmpty()
        || !sender.host().equals(receiver.host())
        || sender.hostMemory() != receiver.hostMemory()) {
      // a host-memory FIFO and a GPU kernel's FIFO differ in layout: such an edge stays on the
      // network
      return NET;
    }
    return sender.p2p() && receiver.p2p() && senderReachesReceiver ? PEER : SHM;
  }
}
