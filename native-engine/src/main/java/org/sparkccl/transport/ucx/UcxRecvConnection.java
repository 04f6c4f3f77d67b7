package org.sparkccl.transport.ucx;

import static org.sparkccl.transport.ucx.UcxLayout.LONGS;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.openucx.jucx.ucp.UcpMemory;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.fifo.FifoLayout;
import org.sparkccl.transport.NetRequest;
import org.sparkccl.transport.RecvConnection;

/**
 * The receiving end of a UCX ring connection: NCCL's {@code netRecvProxy}. Posting a step puts an
 * entry {@code {idx, addr, size, rkey id}} for the freed slot into the sender's side area (the
 * receiver posts first); the step has arrived when the sender's completion record with {@code seq =
 * step + 1} is in this rank's side area. Proxy thread only.
 */
final class UcxRecvConnection extends UcxConnection implements RecvConnection {
  private final int stepSize;

  /** Calls announced to the sender, written into the board in its side area. */
  private final AnnouncementWriter announcements;

  private final Runnable writeAnnouncements = this::writeAnnouncements;

  /** One request per FIFO slot, reused for every step of that slot (one is in flight at a time). */
  private final Request[] requests = new Request[FifoLayout.STEPS];

  UcxRecvConnection(
      UcxTransport transport,
      String description,
      int peer,
      int channel,
      int qps,
      UcxRankInfo peerInfo,
      UcpMemory slots,
      int stepSize) {
    // As many endpoints to the sender as it opens to this rank, though only the first carries
    // anything from here: UCX pairs the two sides' endpoints by creation order, and a sender's
    // endpoint left without a partner gets one UCX creates here, out of this rank's reach. The
    // acknowledgements of puts that UCX emulates over shared memory travel on it, cannot be
    // flushed at close, and UCX 1.13 crashed destroying the worker with them pending.
    super(transport, description, peer, channel, qps, peerInfo, slots, false);
    this.stepSize = stepSize;
    this.announcements = new AnnouncementWriter(side);
    ReceiveFlush.check(slots, description);
  }

  @Override
  public NetRequest postRecv(ByteBuffer data, long step) {
    checkFailed();
    if (peerClosed) {
      // its side area, where the entry would go, is freed once it has this end's answer
      throw peerClosedFailure();
    }
    int e = UcxLayout.outEntry(step);
    side.putLong(e + UcxLayout.ENTRY_IDX, step + 1);
    side.putLong(
        e + UcxLayout.ENTRY_ADDR, slots.getAddress() + (long) FifoLayout.slotOf(step) * stepSize);
    side.putInt(e + UcxLayout.ENTRY_SIZE, data.capacity());
    side.putInt(e + UcxLayout.ENTRY_RKEY, 0);
    LONGS.setRelease(side, e + UcxLayout.ENTRY_IDX_END, step + 1);
    endpoints[0].putNonBlockingImplicit(
        sideAddress + e,
        UcxLayout.ENTRY_BYTES,
        peerSideAddress + UcxLayout.entry(step),
        peerSide[0]);
    int k = FifoLayout.slotOf(step);
    if (requests[k] == null) {
      requests[k] = new Request();
    }
    return requests[k].reuse(data, step);
  }

  /**
   * Queues the call for the sender's board without waking the proxy: the proxy writes what is
   * queued on the first pass after the oldest has waited {@link AnnouncementWriter#BATCH_NANOS},
   * and an idle one within its wait's period ({@link UcxTransport#idleWait}). A reduce's leaves and
   * a broadcast's root announce every call, and where their data goes over sockets the UCX proxy
   * has nothing else to do: a wake-up of it per call made 8 B reduces 1.15-1.66x slower with the
   * check on (16-core host). Nothing waits for an announcement unless a mismatch stalls a rank, and
   * a rank that stalls announces at once ({@link #announceStalled}).
   */
  @Override
  public void announce(CollectiveCall call) {
    transport.noteAnnounced();
    announcements.add(call);
  }

  @Override
  public void announceStalled(CollectiveCall call) {
    announce(call);
    transport.proxyExecutor().execute(writeAnnouncements);
  }

  /**
   * Writes the calls announced so far into the sender's board, as far as it has room; returns
   * whether any was written. Proxy thread only.
   */
  boolean writeAnnouncements() {
    return !isClosed() && !peerClosed && announcements.flush(toPeerSide);
  }

  /**
   * Whether the proxy should write the announced calls now ({@link AnnouncementWriter#due}): a
   * batch has waited long enough, or calls wait for room.
   */
  boolean announcementsDue() {
    return announcements.due();
  }

  /** Whether announced calls wait for room in the sender's board ({@link AnnouncementWriter}). */
  boolean announcementsBlocked() {
    return announcements.blocked();
  }

  /**
   * Tells the sender this end stopped. A close notice goes only once the announcements written so
   * far have landed: the sender frees its side area once it has the notice.
   */
  @Override
  public void notifyPeer(boolean failed, String message) {
    byte[] text = message.getBytes(StandardCharsets.UTF_8);
    int type = failed ? ControlInbox.FAIL : ControlInbox.CLOSE;
    transport
        .proxyExecutor()
        .execute(
            () -> {
              if (!failed) {
                writeAnnouncements();
                if (announcements.blocked()) {
                  // the predecessor has not read a whole board: it is that many calls behind, and
                  // will launch the calls still queued here without their announcements
                  transport.logDebug(description + ": closing with announcements not written");
                }
                if (announcements.wroteAny()) {
                  transport.flushBeforeNotice(endpoints[0], description);
                }
              }
              sendNotice(type, text);
            });
  }

  /**
   * One step: done when the sender's completion record for it is here, and for a record that
   * carries the data ({@link UcxLayout#FLAG_INLINE}), its closing seq too; that data is then copied
   * into the slot.
   */
  private final class Request implements NetRequest {
    private ByteBuffer slot;
    private long step;
    private int size;

    /**
     * Where the completion record of this step lies in the receive side's memory once it is here;
     * -1 before. Its call is read from there: the sender rewrites that record only for a step this
     * rank has made room for, after this one completed.
     */
    private int record = -1;

    Request reuse(ByteBuffer slot, long step) {
      this.slot = slot;
      this.step = step;
      this.size = 0;
      this.record = -1;
      return this;
    }

    @Override
    public boolean test() {
      checkFailed();
      // read first: the sender's last record lands before its close notice does
      boolean senderClosed = peerClosed;
      int r = UcxLayout.record(step);
      if ((long) LONGS.getAcquire(side, r + UcxLayout.RECORD_SEQ_END) != step + 1
          || (long) LONGS.getAcquire(side, r + UcxLayout.RECORD_SEQ) != step + 1) {
        if (senderClosed) {
          throw peerClosedFailure();
        }
        return false;
      }
      int sent = side.getInt(r + UcxLayout.RECORD_SIZE);
      int room = slot.capacity();
      boolean inline = (side.getInt(r + UcxLayout.RECORD_FLAGS) & UcxLayout.FLAG_INLINE) != 0;
      if (sent < 0 || sent > room || (inline && sent > UcxLayout.INLINE_MAX)) {
        throw failure(
            "protocol error: step "
                + step
                + " arrived with "
                + sent
                + " bytes"
                + (inline ? " in its record" : "")
                + ", room for "
                + (inline ? Math.min(room, UcxLayout.INLINE_MAX) : room));
      }
      if (inline) {
        if ((long) LONGS.getAcquire(side, r + UcxLayout.inlineSeq(sent)) != step + 1) {
          return false;
        }
        slot.put(0, side, r + UcxLayout.RECORD_DATA, sent);
      }
      size = sent;
      record = r;
      return true;
    }

    @Override
    public int size() {
      return size;
    }

    @Override
    public CollectiveCall call() {
      return record < 0 ? null : CollectiveCall.decode(side, record + UcxLayout.RECORD_CALL);
    }

    @Override
    public boolean sentFor(CollectiveCall expected) {
      return (record >= 0 && expected.isEncodedAt(side, record + UcxLayout.RECORD_CALL))
          || NetRequest.super.sentFor(expected);
    }
  }
}
