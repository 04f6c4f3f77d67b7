package org.sparkccl.transport.ucx;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HashMap;
import java.util.Map;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucp.UcpWorker;

/**
 * Control notices between ranks (a failure, a normal close, an announced call) as UCX tag messages:
 * one receive stays posted per worker and each notice is routed to its connection. Control only:
 * data always moves by the one-sided handshake. Proxy thread only.
 *
 * <p>A notice is {@code int type, int fromRank, int channel, int toSendingEnd, int length} and
 * {@code length} bytes.
 */
final class ControlInbox {
  static final long TAG = 0x5343434c_00000001L;
  static final int HEADER_BYTES = 20;
  static final int MAX_BYTES = 32 << 10;

  static final int FAIL = 1;
  static final int CLOSE = 2;
  static final int ANNOUNCE = 3;

  private final UcpWorker worker;
  private final ByteBuffer buffer =
      ByteBuffer.allocateDirect(MAX_BYTES).order(ByteOrder.BIG_ENDIAN);
  private final Map<Long, UcxConnection> routes = new HashMap<>();
  private UcpRequest posted;
  private boolean arrived;

  ControlInbox(UcpWorker worker) {
    this.worker = worker;
  }

  static long route(int fromRank, int channel, boolean toSendingEnd) {
    return ((long) fromRank << 32) | ((long) channel << 1) | (toSendingEnd ? 1 : 0);
  }

  void add(long route, UcxConnection connection) {
    routes.put(route, connection);
  }

  /**
   * Delivers what arrived and keeps one receive posted (a receive may match an already queued
   * notice at once, so this loops). Returns whether a notice was delivered.
   */
  boolean poll() {
    boolean delivered = false;
    for (int i = 0; i < 64; i++) {
      if (arrived) {
        arrived = false;
        posted = null;
        deliver();
        delivered = true;
      }
      if (posted == null) {
        buffer.clear();
        posted =
            worker.recvTaggedNonBlocking(
                buffer,
                TAG,
                -1L,
                new UcxCallback() {
                  @Override
                  public void onSuccess(UcpRequest request) {
                    arrived = true;
                  }
                });
      }
      if (!arrived && !posted.isCompleted()) {
        break;
      }
      arrived = true;
    }
    return delivered;
  }

  private void deliver() {
    ByteBuffer b = buffer.duplicate().order(ByteOrder.BIG_ENDIAN).clear();
    int type = b.getInt(0);
    int from = b.getInt(4);
    int channel = b.getInt(8);
    boolean toSendingEnd = b.getInt(12) == 1;
    int length = Math.min(b.getInt(16), MAX_BYTES - HEADER_BYTES);
    byte[] payload = new byte[Math.max(0, length)];
    b.get(HEADER_BYTES, payload);
    UcxConnection c = routes.get(route(from, channel, toSendingEnd));
    if (c != null) {
      c.onNotice(type, payload);
    }
  }

  /** Builds a notice for {@link UcxConnection#sendNotice}. */
  static ByteBuffer notice(int type, int fromRank, int channel, boolean toSendingEnd, byte[] body) {
    int length = Math.min(body.length, MAX_BYTES - HEADER_BYTES);
    ByteBuffer b = ByteBuffer.allocateDirect(HEADER_BYTES + length).order(ByteOrder.BIG_ENDIAN);
    b.putInt(type).putInt(fromRank).putInt(channel).putInt(toSendingEnd ? 1 : 0).putInt(length);
    b.put(body, 0, length).flip();
    return b;
  }

  /** Cancels the posted receive (at close). */
  void close() {
    if (posted != null && !posted.isCompleted()) {
      try {
        worker.cancelRequest(posted);
      } catch (RuntimeException ignored) {
        // closing anyway
      }
    }
    posted = null;
  }
}
