package org.sparkccl.transport.ucx;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.logging.log4j.Logger;
import org.openucx.jucx.UcxCallback;
import org.openucx.jucx.ucp.UcpRequest;
import org.openucx.jucx.ucp.UcpWorker;
import org.sparkccl.util.EngineLog;

/**
 * Control notices between ranks (a proof at connect, a failure, a normal close) as UCX tag
 * messages: one receive stays posted per worker and each notice is routed to its connection, which
 * checks its MAC ({@link NoticeMac}) before acting on it. Control only: data always moves by the
 * one-sided handshake, and the mismatch check's announcements by puts into a board ({@link
 * AnnouncementWriter}). Proxy thread only.
 *
 * <p>A notice is {@code int type, int fromRank, int channel, int toSendingEnd, int length, long
 * counter}, {@code length} bytes, then the {@link NoticeMac#BYTES}-byte MAC over all before it.
 * Anyone holding the worker's address can send this tag, and the header names a sender but proves
 * nothing: a notice whose size, route, MAC or counter does not check is dropped with one log line.
 */
final class ControlInbox {
  private static final Logger LOG = EngineLog.logger(ControlInbox.class);

  static final long TAG = 0x5343434c_00000001L;
  static final int HEADER_BYTES = 28;
  static final int MAX_BYTES = 32 << 10;
  static final int MAX_BODY = MAX_BYTES - HEADER_BYTES - NoticeMac.BYTES;

  /**
   * The longest body this end sends (828 bytes a notice in all), which UCX sent eagerly (copied out
   * at once) in every run. A larger notice may go by rendezvous, which registers the buffer until
   * the peer fetches it, and a rank that closed with one outstanding crashed in UCX's clean-up (6
   * KiB notices, which carried announced calls then, on UCX 1.16, docs/reliability.md). A longer
   * failure message is cut.
   */
  static final int SENT_MAX_BODY = 768;

  static final int FAIL = 1;
  static final int CLOSE = 2;
  static final int HELLO = 4;

  /**
   * The answer to a {@link #CLOSE}: this end put nothing more into the closing rank's memory, and
   * what it put before has landed (see {@link UcxConnection#acknowledgeClose}).
   */
  static final int CLOSE_SEEN = 8;

  /** Notices refused by every inbox of this process, for tests and operators. */
  private static final AtomicLong REFUSED = new AtomicLong();

  private static final byte[] NO_HEADER = new byte[HEADER_BYTES];

  private final int rank;
  private final UcpWorker worker;
  private final ByteBuffer buffer =
      ByteBuffer.allocateDirect(MAX_BYTES).order(ByteOrder.BIG_ENDIAN);
  private final byte[] received = new byte[MAX_BYTES];
  private final ByteBuffer view = ByteBuffer.wrap(received).order(ByteOrder.BIG_ENDIAN);
  private final Map<Long, UcxConnection> routes = new HashMap<>();
  private UcpRequest posted;
  private boolean arrived;

  ControlInbox(int rank, UcpWorker worker) {
    this.rank = rank;
    this.worker = worker;
  }

  static long route(int fromRank, int channel, boolean toSendingEnd) {
    return ((long) fromRank << 32) | ((long) channel << 1) | (toSendingEnd ? 1 : 0);
  }

  /** Notices refused so far in this process (bad size, unknown route, MAC or counter). */
  static long refused() {
    return REFUSED.get();
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
        UcpRequest r = posted;
        posted = null;
        delivered |= deliver(r.getStatus() == 0 ? r.getRecvSize() : -1);
      }
      if (posted == null) {
        // a message shorter than a header must not leave an earlier notice's header in place
        buffer.clear().put(NO_HEADER).clear();
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

                  @Override
                  public void onError(int status, String message) {
                    arrived = true; // a notice larger than the buffer: refused when delivered
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

  /**
   * Checks and hands on one notice. {@code reported} is the size UCX reported: -1 when the receive
   * failed (a message larger than the buffer), 0 when Jucx did not report it (a receive that
   * matched at once), so the size is the header's, checked against what UCX reported when it did.
   */
  private boolean deliver(long reported) {
    int length = buffer.getInt(16);
    long size = (long) HEADER_BYTES + length + NoticeMac.BYTES;
    if (reported < 0 || length < 0 || size > MAX_BYTES || (reported > 0 && reported != size)) {
      return refuse(
          "a malformed notice ("
              + (reported < 0 ? "larger than " + MAX_BYTES : reported + "")
              + " bytes, a body of "
              + length
              + " claimed)");
    }
    int n = (int) size;
    buffer.get(0, received, 0, n);
    int type = view.getInt(0);
    int from = view.getInt(4);
    int channel = view.getInt(8);
    int end = view.getInt(12);
    if (end != 0 && end != 1) {
      return refuse("a malformed notice: end " + end);
    }
    UcxConnection c = routes.get(route(from, channel, end == 1));
    if (c == null) {
      return refuse(
          "a notice claiming rank " + from + ", channel " + channel + ": no such connection here");
    }
    if (!c.accept(received, HEADER_BYTES + length, view.getLong(20))) {
      return refuse(
          "a notice for "
              + c
              + " whose MAC or counter does not check (not from a holder of this communicator's"
              + " secret, or replayed)");
    }
    c.onNotice(type, Arrays.copyOfRange(received, HEADER_BYTES, HEADER_BYTES + length));
    return true;
  }

  private boolean refuse(String what) {
    REFUSED.incrementAndGet();
    LOG.warn("rank {}: UCX control notice refused: {}", rank, what);
    return false;
  }

  /**
   * Builds a signed notice for {@link UcxConnection#sendNotice}: the counter must grow with each
   * notice of one direction.
   */
  static ByteBuffer notice(
      int type,
      int fromRank,
      int channel,
      boolean toSendingEnd,
      long counter,
      byte[] body,
      NoticeMac mac) {
    int length = Math.min(body.length, SENT_MAX_BODY);
    byte[] b = new byte[HEADER_BYTES + length + NoticeMac.BYTES];
    ByteBuffer.wrap(b)
        .order(ByteOrder.BIG_ENDIAN)
        .putInt(type)
        .putInt(fromRank)
        .putInt(channel)
        .putInt(toSendingEnd ? 1 : 0)
        .putInt(length)
        .putLong(counter)
        .put(body, 0, length);
    mac.sign(b, HEADER_BYTES + length);
    ByteBuffer out = ByteBuffer.allocateDirect(b.length).put(b);
    out.flip();
    return out;
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
