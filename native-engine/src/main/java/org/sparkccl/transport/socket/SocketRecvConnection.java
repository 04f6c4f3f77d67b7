package org.sparkccl.transport.socket;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executor;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.idle.IdleStrategies;
import org.sparkccl.transport.AnnouncementQueue;
import org.sparkccl.transport.FailureNotice;
import org.sparkccl.transport.NetRequest;
import org.sparkccl.transport.RecvConnection;

/** The receiving end of a socket connection. */
final class SocketRecvConnection extends SocketConnection implements RecvConnection {
  /** Announcement frames written in one system call at most. */
  private static final int ANNOUNCE_BATCH = 64;

  /**
   * The frames that announce calls, reused: a broadcast's root and a reduce's leaves announce at
   * every launch. Direct, so that the write does not copy them into a temporary direct buffer.
   */
  private final ByteBuffer announceFrames =
      ByteBuffer.allocateDirect(ANNOUNCE_BATCH * SocketRequest.HEADER_BYTES);

  /** Calls announced and not written yet (see {@link #announce}). */
  private final AnnouncementQueue announced = new AnnouncementQueue();

  /** The calls of the frames being written (under the lock of {@link #announceFrames}). */
  private final CollectiveCall[] writing = new CollectiveCall[ANNOUNCE_BATCH];

  /**
   * Where announcements are written: the proxy thread, a while after the first of a batch ({@link
   * SocketTransport#onProxy}); null: the announcing thread writes.
   */
  private volatile Executor proxyTasks;

  SocketRecvConnection(
      String description,
      int peer,
      Wire control,
      Wire[] data,
      int nThreads,
      IdleStrategies idle,
      Selector proxySelector,
      Runnable wakeProxy)
      throws IOException {
    super(
        description,
        peer,
        new StagedReadWire(control),
        data,
        nThreads,
        idle,
        proxySelector,
        wakeProxy,
        null);
  }

  /**
   * The receiving half of the socket whose sending half is {@code send}: the peer's data to this
   * rank and this rank's data to the peer share it.
   */
  SocketRecvConnection(
      String description,
      int peer,
      Wire control,
      IdleStrategies idle,
      Selector proxySelector,
      Runnable wakeProxy,
      SocketSendConnection send)
      throws IOException {
    super(
        description,
        peer,
        new StagedReadWire(control),
        new Wire[0],
        0,
        idle,
        proxySelector,
        wakeProxy,
        send);
  }

  /** The control socket's bytes, for a sending half over the same socket. */
  Wire wire() {
    return wire;
  }

  /** A socket reads into any direct memory; a sealed one opens records into it. */
  @Override
  public boolean readsIntoAnyMemory() {
    return true;
  }

  @Override
  public NetRequest postRecv(ByteBuffer slot, long step) {
    SocketRequest r = request(slot, step);
    queue.add(r);
    progress();
    return r;
  }

  @Override
  void progress() {
    try {
      if (partner instanceof SocketSendConnection send && send.midNotice()) {
        send.readNotice(); // a notice half read by the sending half ends before data is read
        if (send.midNotice()) {
          interest(SelectionKey.OP_READ);
          return;
        }
      }
      SocketRequest r;
      while ((r = queue.peek()) != null) {
        if (r.header.hasRemaining()) {
          ByteBuffer held =
              partner instanceof SocketSendConnection send && r.header.position() == 0
                  ? send.takeHeldHeader()
                  : null;
          if (held != null) {
            r.header
                .put(0, held, 0, SocketRequest.HEADER_BYTES)
                .position(SocketRequest.HEADER_BYTES);
          } else {
            read(r.header);
          }
          if (r.header.hasRemaining()) {
            interest(SelectionKey.OP_READ);
            return;
          }
          if (tookNotice(r.header)) {
            r.header.clear();
            continue;
          }
          parseHeader(r);
        }
        if (r.inline) {
          if (r.payload.hasRemaining()) {
            read(r.payload);
            if (r.payload.hasRemaining()) {
              interest(SelectionKey.OP_READ);
              return;
            }
          }
        } else if (r.chunks == null) {
          r.chunks = dispatchChunks(r.payload, r.size, false);
        }
        r.controlDone = true;
        queue.poll();
      }
      interest(0);
    } catch (IOException e) {
      throw failure("receiving failed", e);
    }
  }

  /** Reads a failure notice's text (the peer has stopped sending: a short blocking wait). */
  private String readNotice(int size) throws IOException {
    ByteBuffer text = ByteBuffer.allocate(Math.max(0, Math.min(size, 64 << 10)));
    long deadline = System.nanoTime() + 1_000_000_000L;
    while (text.hasRemaining() && System.nanoTime() < deadline) {
      if (wire.read(text) < 0) {
        break;
      }
    }
    return new String(text.array(), 0, text.position(), StandardCharsets.UTF_8);
  }

  /** Reads what is there; throws when the peer has closed. */
  private void read(ByteBuffer into) throws IOException {
    if (wire.read(into) < 0) {
      throw failure("connection closed by the peer (did the peer process die or abort?)", null);
    }
  }

  /**
   * Handles a notice met among the data. A close fails the wait, since the peer will send no more
   * (a ring's sender closes after its last data frame; a pair's peer on the shared socket). On a
   * pair's socket an announcement goes to the sending half (true: read the next header).
   */
  private boolean tookNotice(ByteBuffer header) {
    int flags = header.getInt(12);
    SocketSendConnection send = partner instanceof SocketSendConnection s ? s : null;
    if (send != null && flags == SocketRequest.FLAG_ANNOUNCE) {
      CollectiveCall call = CollectiveCall.decode(header, SocketRequest.CALL_OFFSET);
      if (call != null) {
        send.heardAnnouncement(call);
      }
      return true;
    }
    if (flags == SocketRequest.FLAG_CLOSE) {
      if (send != null) {
        send.markPeerClosed();
      }
      throw failure(
          "rank " + peer() + " has closed its communicator while this rank waited for its data",
          null);
    }
    return false;
  }

  @Override
  public void announce(CollectiveCall call) {
    if (partner != null) {
      // announcements go to ring predecessors; on a pair's socket a frame written from the
      // launching thread could cut into a data frame the sending half writes in parts
      throw new IllegalStateException(description + ": a point-to-point pair does not announce");
    }
    Executor tasks = proxyTasks;
    boolean schedule = announced.add(call);
    if (tasks == null) {
      writeAnnouncements();
    } else if (schedule) {
      // A reduce's leaves and a broadcast's root announce every call. A frame per call cost them
      // a system call each, written by the launching thread or the proxy, and the predecessor a
      // read: 8 B reduces took 1.27-1.39x their time without the check (4 and 8 ranks, 16-core
      // host). The proxy writes the batch a moment later, every call queued by then in
      // as few writes as fit; nothing waits for announcements unless a mismatch stalls a rank.
      tasks.execute(this::writeAnnouncements);
    }
  }

  /** Writes the proxy thread's announcement frames from now on (see {@link #announce}). */
  void announceThrough(Executor proxyTasks) {
    this.proxyTasks = proxyTasks;
  }

  /** Writes every call announced so far, oldest first, as many frames a system call as fit. */
  private void writeAnnouncements() {
    synchronized (announceFrames) {
      for (int n; (n = announced.take(writing)) > 0; ) {
        announceFrames.clear();
        for (int i = 0; i < n; i++) {
          int at = i * SocketRequest.HEADER_BYTES;
          announceFrames
              .putLong(at, -1)
              .putInt(at + 8, 0)
              .putInt(at + 12, SocketRequest.FLAG_ANNOUNCE);
          writing[i].encode(announceFrames, at + SocketRequest.CALL_OFFSET);
          writing[i] = null;
        }
        announceFrames.limit(n * SocketRequest.HEADER_BYTES);
        if (!writeFrame(wire, announceFrames)) {
          throw failure("announcing the call failed (the socket is closed now)", null);
        }
      }
    }
  }

  @Override
  public void notifyPeer(boolean failed, String message) {
    if (partner instanceof SocketSendConnection send && send.isWriting()) {
      return; // best effort: a notice must not cut into a data frame written in parts
    }
    if (partner == null) {
      try {
        // the calls announced before the notice are read before it: a mismatch in the last call
        // before a close must still reach the peer
        writeAnnouncements();
      } catch (RuntimeException e) {
        return; // the socket is closed: the notice cannot go out either
      }
    }
    writeFrame(wire, failed ? SocketRequest.FLAG_ABORT : SocketRequest.FLAG_CLOSE, message);
  }

  private void parseHeader(SocketRequest r) throws IOException {
    long step = r.header.getLong(0);
    int size = r.header.getInt(8);
    if (r.header.getInt(12) == SocketRequest.FLAG_ABORT) {
      throw FailureNotice.raise(readNotice(size));
    }
    if (step != r.step || size < 0 || size > r.slot.capacity()) {
      throw failure(
          "protocol error: got step "
              + step
              + " of "
              + size
              + " bytes, expected step "
              + r.step
              + " of at most "
              + r.slot.capacity()
              + " bytes",
          null);
    }
    r.size = size;
    r.inline = isInline(size);
    r.payload = r.payloadOf(size);
  }
}
