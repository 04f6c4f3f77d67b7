package org.sparkccl.transport;

import java.nio.ByteBuffer;

/** The receiving end of one channel's connection from the previous rank. Proxy thread only. */
public interface RecvConnection extends AutoCloseable {
  /** Starts receiving FIFO step {@code step} into {@code data} (at most its capacity). */
  NetRequest postRecv(ByteBuffer data, long step);

  /**
   * Whether {@link #postRecv} may be given any direct memory rather than the FIFO's slot: then
   * large steps that land unchanged in a host collective's output are received straight there.
   * False where the transport writes only into memory it registered.
   */
  default boolean readsIntoAnyMemory() {
    return false;
  }

  /**
   * Whether only the thread that owns the transport's progress may move this connection's requests
   * (UCX: its worker is the proxy thread's alone); kernels that assist the proxy move the others.
   */
  default boolean progressedByOwner() {
    return false;
  }

  int peer();

  /** Whether the connection exists yet (a point-to-point one appears when the peer connects). */
  default boolean isReady() {
    return true;
  }

  /**
   * Tells the sending rank, against the data's direction, that this rank failed and why, or (with
   * {@code failed == false}) that it is closing normally. Best effort, never blocks; any thread.
   * Failures travel backwards around the ring this way, each rank passing them on, so every rank
   * learns the first cause rather than just "connection closed".
   */
  void notifyPeer(boolean failed, String message);

  /**
   * Tells the sending rank which collective this rank is about to receive for, against the data's
   * direction, without waiting for anything: the sender compares it with its own call, so two ranks
   * that both wait to receive still find out they called different things.
   */
  default void announce(org.sparkccl.comm.CollectiveCall call) {}

  /**
   * As {@link #announce}, for a rank whose collective has waited past its fast phase: the call goes
   * out now, where a transport would otherwise hold announcements back to send several at once.
   */
  default void announceStalled(org.sparkccl.comm.CollectiveCall call) {
    announce(call);
  }

  @Override
  void close();
}
