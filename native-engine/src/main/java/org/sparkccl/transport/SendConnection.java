package org.sparkccl.transport;

import java.nio.ByteBuffer;
import org.sparkccl.comm.CollectiveCall;

/** The sending end of one channel's connection to the next rank. Proxy thread only. */
public interface SendConnection extends AutoCloseable {
  /**
   * Starts sending bytes {@code [0, size)} of {@code data} as FIFO step {@code step} of collective
   * {@code call}, whose description travels with the data.
   */
  NetRequest postSend(ByteBuffer data, int size, long step, CollectiveCall call);

  /**
   * Tells the receiving rank that this rank failed and why, if the control stream is between two
   * messages (otherwise the peer learns it another way). Best effort, never blocks; call inside a
   * proxy progress pass ({@code ProxyThread.runExclusive}).
   */
  void notifyFailure(String message);

  /**
   * Tells the receiving rank that this rank is closing normally. Over UCX the receiver writes into
   * this rank's memory (its entries, into the side area) and must stop before that is freed; over
   * sockets a receive it still waits on then fails naming the close, not the socket's end.
   * Elsewhere the receiver learns from the connection's end, and this does nothing. Best effort,
   * never blocks; any thread.
   */
  default void notifyClosed(String message) {}

  /** {@link #notifyFailure} or {@link #notifyClosed}, as {@link RecvConnection#notifyPeer} is. */
  default void notifyPeer(boolean failed, String message) {
    if (failed) {
      notifyFailure(message);
    } else {
      notifyClosed(message);
    }
  }

  /**
   * Registers who hears about the calls the receiving rank announces (see {@link
   * RecvConnection#announce}); called on the proxy thread, in a progress pass.
   */
  default void onAnnounce(java.util.function.Consumer<CollectiveCall> listener) {}

  /**
   * Whether {@link #postSend} may be given any direct memory rather than the FIFO's slot: then a
   * host kernel leaves the bytes of a large step where they are (the caller's buffers) instead of
   * copying them into the slot ({@code Fifo#publishFrom}). False where the transport reads only
   * memory it registered, or the peer reads the slot itself.
   */
  default boolean sendsFromAnyMemory() {
    return false;
  }

  /**
   * Whether the connection exists yet: a point-to-point one that the peer connects (one socket per
   * pair of ranks) appears when the peer does; the proxy posts nothing before.
   */
  default boolean isReady() {
    return true;
  }

  /**
   * Whether only the thread that owns the transport's progress may move this connection's requests
   * (UCX: its worker is the proxy thread's alone); kernels that assist the proxy move the others.
   */
  default boolean progressedByOwner() {
    return false;
  }

  /** The peer's rank, for messages. */
  int peer();

  @Override
  void close();
}
