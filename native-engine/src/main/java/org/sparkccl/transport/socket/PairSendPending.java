package org.sparkccl.transport.socket;

import java.nio.ByteBuffer;
import java.util.function.Consumer;
import java.util.function.IntFunction;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.transport.NetRequest;
import org.sparkccl.transport.SendConnection;

/**
 * The sending end from a higher rank to a lower one when point-to-point links go in pairs ({@link
 * PeerAcceptor#pairs}): the lower rank connects the pair's socket, so until it has (it does on its
 * first send to or receive from this rank), there is nothing to send on. The proxy posts nothing
 * before {@link #isReady}, as for a receiving end whose peer has not connected yet; a rank that
 * waits for the data of such a send fails at its own deadline, as it would for any late peer.
 */
final class PairSendPending implements SendConnection {
  private final int peer;
  private final IntFunction<SocketSendConnection> open;
  private Consumer<CollectiveCall> announceListener = c -> {};
  private SocketSendConnection real;

  /** {@code open} makes the sending half once the peer has connected, else returns null. */
  PairSendPending(int peer, IntFunction<SocketSendConnection> open) {
    this.peer = peer;
    this.open = open;
  }

  private synchronized SocketSendConnection real() {
    if (real == null) {
      real = open.apply(peer);
      if (real != null) {
        real.onAnnounce(announceListener);
      }
    }
    return real;
  }

  @Override
  public boolean isReady() {
    return real() != null;
  }

  @Override
  public NetRequest postSend(ByteBuffer data, int size, long step, CollectiveCall call) {
    SocketSendConnection c = real();
    if (c == null) {
      throw new IllegalStateException("rank " + peer + " has not connected yet");
    }
    return c.postSend(data, size, step, call);
  }

  @Override
  public void notifyFailure(String message) {
    SocketSendConnection c = real();
    if (c != null) {
      c.notifyFailure(message);
    }
  }

  @Override
  public synchronized void onAnnounce(Consumer<CollectiveCall> listener) {
    announceListener = listener;
    if (real != null) {
      real.onAnnounce(listener);
    }
  }

  /** A socket writes from any direct memory, as the half this becomes does. */
  @Override
  public boolean sendsFromAnyMemory() {
    return true;
  }

  @Override
  public int peer() {
    return peer;
  }

  @Override
  public synchronized void close() {
    if (real != null) {
      real.close();
    }
  }
}
