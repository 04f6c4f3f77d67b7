package org.sparkccl.transport.socket;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.charset.StandardCharsets;
import org.sparkccl.CclException;
import org.sparkccl.CclMismatchException;
import org.sparkccl.CclRemoteException;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.idle.IdleStrategies;
import org.sparkccl.proxy.ReadyHandler;
import org.sparkccl.transport.FailureNotice;
import org.sparkccl.transport.NetRequest;
import org.sparkccl.transport.SendConnection;

/**
 * The sending end of a socket connection. It also reads the control socket's other direction, where
 * the receiving rank reports a failure or a normal close (see {@link
 * SocketRecvConnection#notifyPeer}). As the sending half of a point-to-point pair ({@link
 * PeerAcceptor#pairs}) it leaves reading to the receiving half, but for what arrives before that
 * half exists: a data frame's header it meets then waits there for that half's first request.
 */
final class SocketSendConnection extends SocketConnection implements SendConnection {
  private static final int MAX_NOTICE = 64 << 10;

  private final ByteBuffer[] gather = new ByteBuffer[2];
  private final ByteBuffer noticeHeader = ByteBuffer.allocate(SocketRequest.HEADER_BYTES);
  private ByteBuffer notice;
  private int noticeFlags;
  private final Object noticeLock = new Object();

  /** The peer's close notice was read. */
  private volatile boolean closeNoticeRead;

  /** The peer's socket ended (without a close notice, where a process died). */
  private volatile boolean streamEnded;

  /**
   * A ring's connection, whose reverse direction carries only the peer's notices and announcements
   * (no pair's data): the proxy reads them outside its progress passes. A successor's announcement
   * of every call of a tree reduce held the predecessor's progress lock for a read of 40 bytes
   * (about a microsecond a call on the 16-core host), while that rank's kernel waited to move its
   * data (docs/benchmarks.md). Until the constructor has set it (the socket is registered first), a
   * ready socket is read in a pass, as it always may be.
   */
  private final boolean noticesOnly;

  /**
   * A data frame's header this half read on a pair's socket before the receiving half existed
   * ({@link #holding}); that half's first request starts from it.
   */
  private final ByteBuffer heldForPartner = ByteBuffer.allocate(SocketRequest.HEADER_BYTES);

  private boolean holding;

  /**
   * Set last by the constructors. The superclass registers the socket, with this half's handler,
   * before this class's fields exist, and the proxy (or its socket watcher, selecting while the
   * proxy waits for UCX) may find the socket ready at once: a handler that read then met a null
   * notice header and failed the communicator (once in about 140 runs of 8 B broadcasts and reduces
   * of rank processes over UCX on the 2-core VM). Until then the handler leaves the socket alone;
   * the selector reports it again, since readiness persists until the bytes are read.
   */
  private volatile boolean constructed;

  private volatile java.util.function.Consumer<CollectiveCall> announceListener = c -> {};

  @Override
  public void onAnnounce(java.util.function.Consumer<CollectiveCall> listener) {
    this.announceListener = listener;
  }

  SocketSendConnection(
      String description,
      int peer,
      Wire control,
      Wire[] data,
      int nThreads,
      IdleStrategies idle,
      Selector proxySelector,
      Runnable wakeProxy,
      boolean noticesOnly)
      throws IOException {
    super(description, peer, control, data, nThreads, idle, proxySelector, wakeProxy, null);
    this.noticesOnly = noticesOnly;
    this.constructed = true;
  }

  /**
   * The sending half of the socket whose receiving half is {@code recv}: this rank's data to the
   * peer and the peer's data to this rank share it.
   */
  SocketSendConnection(
      String description,
      int peer,
      Wire control,
      IdleStrategies idle,
      Selector proxySelector,
      Runnable wakeProxy,
      SocketRecvConnection recv)
      throws IOException {
    super(description, peer, control, new Wire[0], 0, idle, proxySelector, wakeProxy, recv);
    this.noticesOnly = false;
    this.constructed = true;
  }

  /** The control socket's bytes, for a receiving half over the same socket. */
  Wire wire() {
    return wire;
  }

  /** Whether the peer's close notice has been read. */
  boolean peerHasClosed() {
    return closeNoticeRead;
  }

  /** The peer's close notice arrived through the receiving half of a pair. */
  void markPeerClosed() {
    closeNoticeRead = true;
  }

  /** Nothing more comes from the peer: its close notice was read, or its socket ended. */
  private boolean peerDone() {
    return closeNoticeRead || streamEnded;
  }

  /** The peer announced {@code call} through the receiving half of a pair. */
  void heardAnnouncement(CollectiveCall call) {
    announceListener.accept(call);
  }

  /**
   * The data frame's header held for the receiving half, or null; forgets it (the buffer is reused
   * for the next, so the caller copies it at once).
   */
  ByteBuffer takeHeldHeader() {
    if (!holding) {
      return null;
    }
    holding = false;
    return heldForPartner;
  }

  /** Whether a notice is half read: the receiving half of a pair must not read before it ends. */
  boolean midNotice() {
    return noticeHeader.position() > 0;
  }

  @Override
  public NetRequest postSend(ByteBuffer slot, int size, long step, CollectiveCall call) {
    if (peerDone()) {
      throw closeNoticeRead ? peerClosedFailure() : socketEndedFailure();
    }
    SocketRequest r = request(slot, step);
    r.size = size;
    r.inline = isInline(size);
    r.payload = r.payloadOf(size);
    r.header.putLong(0, step).putInt(8, size).putInt(12, SocketRequest.FLAG_DATA);
    call.encode(r.header, SocketRequest.CALL_OFFSET);
    queue.add(r);
    progress();
    return r;
  }

  /** A socket writes from any direct memory; a sealed one seals it into its own buffer. */
  @Override
  public boolean sendsFromAnyMemory() {
    return true;
  }

  /** Whether a frame of this half is queued or half written (a notice must not cut into it). */
  boolean isWriting() {
    return !queue.isEmpty();
  }

  @Override
  public void notifyFailure(String message) {
    if (!isWriting()) {
      writeFrame(wire, SocketRequest.FLAG_ABORT, message);
    }
  }

  /**
   * Tells the receiving rank of a ring that this rank closed, after its last data frame, so that a
   * receive it still waits on (a call this rank never joined) fails naming the close, not a socket
   * closed by the peer. A pair's receiving half sends the notice for both halves.
   */
  @Override
  public void notifyClosed(String message) {
    if (partner == null && !isWriting()) {
      writeFrame(wire, SocketRequest.FLAG_CLOSE, message);
    }
  }

  @Override
  protected int idleInterest() {
    return peerDone() || holding || partner != null ? 0 : SelectionKey.OP_READ;
  }

  @Override
  protected ReadyHandler handler() {
    return new ReadyHandler() {
      @Override
      public void onReady() {
        if (constructed) {
          readNotice();
        }
      }

      @Override
      public boolean runsInPass() {
        return !noticesOnly || partner != null;
      }
    };
  }

  /**
   * Reads the peer's notices that are there; throws the failure one reports. It stops at a data
   * frame's header, held for the receiving half of a pair (met only before that half exists, since
   * a pair's key has no handler); that half calls it to end a notice this half began.
   */
  void readNotice() {
    // the proxy reads a ring's notices outside its passes; a failed send reads them in one
    synchronized (noticeLock) {
      try {
        while (!peerDone() && readOneNotice()) {
          // keep reading: the selector reports the socket once for several frames
        }
      } catch (IOException e) {
        throw failure("reading the peer's notice failed", e);
      }
    }
  }

  /**
   * What a failed write reports: the peer's close, or the failure it told of, where its notice
   * waits in the socket (read now), else the write's own error. A peer that stops with this rank's
   * data unread resets the connection, and the reset can beat the proxy's read of the notice sent
   * before it: with three ranks as threads and a 4 MiB call, about one round in 40 where rank 0
   * closed ended with its successor failing from "Connection reset by peer", and about one in 400
   * with rank 1 failing from "Broken pipe" where rank 2 had failed and told it why.
   */
  private CclException sendFailure(IOException e) {
    if (!peerDone() && partner == null) {
      try {
        readNotice();
      } catch (CclRemoteException | CclMismatchException told) {
        return told;
      } catch (RuntimeException nothingMore) {
        // the socket ended without a notice: the write's own failure is what is known
      }
    }
    return closeNoticeRead ? peerClosedFailure() : failure("sending failed", e);
  }

  private CclException peerClosedFailure() {
    return failure("rank " + peer() + " has closed its communicator", null);
  }

  private CclException socketEndedFailure() {
    return failure("connection closed by the peer (did the peer process die?)", null);
  }

  /**
   * Where notices are read: the socket's own bytes, or on a pair the receiving half's, which stages
   * bytes ahead of what it has handed out.
   */
  private Wire readSide() {
    return partner instanceof SocketRecvConnection r ? r.wire() : wire;
  }

  /** Reads at most one notice; returns whether it completed one. */
  private boolean readOneNotice() throws IOException {
    if (noticeHeader.hasRemaining()) {
      if (readSide().read(noticeHeader) < 0) {
        streamEnded = true;
        interest(0);
        throw socketEndedFailure();
      }
      if (noticeHeader.hasRemaining()) {
        return false;
      }
      noticeFlags = noticeHeader.getInt(12);
      if (noticeFlags == SocketRequest.FLAG_DATA) {
        // the peer's data on a pair's socket, for the receiving half's next request; that half
        // may not exist yet (the lower rank connects the socket before it makes that half)
        heldForPartner.put(0, noticeHeader, 0, SocketRequest.HEADER_BYTES);
        holding = true;
        noticeHeader.clear();
        interest(0);
        return false;
      }
      if (noticeFlags == SocketRequest.FLAG_ANNOUNCE) {
        CollectiveCall call = CollectiveCall.decode(noticeHeader, SocketRequest.CALL_OFFSET);
        noticeHeader.clear();
        if (call != null) {
          announceListener.accept(call);
        }
        return true;
      }
      int size = noticeHeader.getInt(8);
      if (size < 0 || size > MAX_NOTICE) {
        throw failure("protocol error: a notice of " + size + " bytes", null);
      }
      notice = ByteBuffer.allocate(size);
    }
    if (readSide().read(notice) < 0 || notice.hasRemaining()) {
      return false;
    }
    String text = new String(notice.array(), StandardCharsets.UTF_8);
    noticeHeader.clear();
    if (noticeFlags == SocketRequest.FLAG_CLOSE) {
      markPeerClosed();
      interest(0);
      return true;
    }
    throw FailureNotice.raise(text);
  }

  @Override
  void progress() {
    try {
      SocketRequest r;
      while ((r = queue.peek()) != null) {
        if (r.inline) {
          gather[0] = r.header;
          gather[1] = r.payload;
          wire.write(gather);
          if (r.header.hasRemaining() || r.payload.hasRemaining()) {
            interest(SelectionKey.OP_WRITE);
            return;
          }
        } else {
          wire.write(r.header);
          if (r.header.hasRemaining()) {
            interest(SelectionKey.OP_WRITE);
            return;
          }
          r.chunks = dispatchChunks(r.payload, r.size, true);
        }
        r.controlDone = true;
        queue.poll();
      }
      interest(0);
    } catch (IOException e) {
      throw sendFailure(e);
    }
  }
}
