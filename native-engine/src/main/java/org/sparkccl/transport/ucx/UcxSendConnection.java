package org.sparkccl.transport.ucx;

import static org.sparkccl.transport.ucx.UcxLayout.LONGS;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.function.Consumer;
import org.openucx.jucx.ucp.UcpMemory;
import org.openucx.jucx.ucp.UcpRemoteKey;
import org.openucx.jucx.ucp.UcpRequest;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.fifo.FifoLayout;
import org.sparkccl.transport.NetRequest;
import org.sparkccl.transport.SendConnection;

/**
 * The sending end of a UCX ring connection: NCCL's {@code netSendProxy} over NCCL's {@code net_ib}
 * handshake. For each step it waits for the receiver's entry in its own side area ({@code idx =
 * step + 1}), puts the slot straight into the receiver's slot (striped over {@code
 * ib.qpsPerConnection} endpoints), flushes those endpoints so the data has landed, and then puts
 * the completion record (size and {@link CollectiveCall}) into the receiver's side area. A step of
 * at most {@link UcxLayout#INLINE_MAX} bytes travels inside its record instead, in one put with no
 * flush, its seq repeated after the data (NCCL's LL idea: the receiver never waits for a separate
 * flag): a flush is a round trip to the receiver, so a small step cost about three one-way
 * latencies and now costs one. Proxy thread only.
 */
final class UcxSendConnection extends UcxConnection implements SendConnection {
  /** Smallest piece worth its own endpoint when a slot is striped. */
  static final int MIN_STRIPE = 64 << 10;

  private final UcpRemoteKey[] peerSlots;
  private final int stepSize;
  private final ArrayDeque<Request> queue = new ArrayDeque<>();

  /**
   * One request per FIFO slot, reused for every step of that slot: the proxy posts a step only once
   * the slot's previous step has completed, so a small collective allocates none.
   */
  private final Request[] requests = new Request[FifoLayout.STEPS];

  private Consumer<CollectiveCall> announceListener = c -> {};

  /** The calls the receiving rank announces to this one, from the board in this side area. */
  private final AnnouncementReader announcements;

  UcxSendConnection(
      UcxTransport transport,
      String description,
      int peer,
      int channel,
      int qps,
      UcxRankInfo peerInfo,
      UcpMemory slots) {
    super(transport, description, peer, channel, qps, peerInfo, slots, true);
    this.stepSize = (int) (slots.getLength() / FifoLayout.STEPS);
    this.announcements = new AnnouncementReader(side, description);
    this.peerSlots = new UcpRemoteKey[qps];
    try {
      for (int i = 0; i < qps; i++) {
        peerSlots[i] = transport.unpack(endpoints[i], peerInfo.recvSlots()[channel], description);
      }
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  @Override
  public NetRequest postSend(ByteBuffer data, int size, long step, CollectiveCall call) {
    checkFailed();
    if (peerClosed) {
      throw peerClosedFailure();
    }
    int k = FifoLayout.slotOf(step);
    if (requests[k] == null) {
      requests[k] = new Request();
    }
    Request r = requests[k].reuse(data, step, size, call);
    queue.add(r);
    progress();
    return r;
  }

  /** Moves every queued step as far as it can go. */
  private void progress() {
    for (Request r : queue) {
      r.advance();
    }
    while (!queue.isEmpty() && queue.peek().done) {
      queue.poll();
    }
  }

  @Override
  public void notifyFailure(String message) {
    byte[] text = message.getBytes(StandardCharsets.UTF_8);
    transport.proxyExecutor().execute(() -> sendNotice(ControlInbox.FAIL, text));
  }

  /**
   * Tells the receiver this end closes: the receiver posts its entries into this rank's side area,
   * and must stop before that goes. It answers once it has stopped ({@link
   * UcxConnection#acknowledgeClose}); the notice goes once this end's puts have landed.
   */
  @Override
  public void notifyClosed(String message) {
    byte[] text = message.getBytes(StandardCharsets.UTF_8);
    transport.proxyExecutor().execute(() -> sendNoticeAfterPuts(ControlInbox.CLOSE, text));
  }

  @Override
  public void onAnnounce(Consumer<CollectiveCall> listener) {
    this.announceListener = listener;
  }

  /**
   * Whether the receiving rank may still have notices on the way here: it announces calls to this
   * rank (it did, or this rank announced its own, and ranks announce the same collectives) and has
   * not yet said it closed or failed. A closing rank keeps its worker alive until none may (see
   * {@code UcxTransport#close}). What this rank heard alone is not enough: a broadcast's root can
   * finish before its successor's first announcement reaches it.
   *
   * @param thisRankAnnounced whether this rank announced any call over UCX
   */
  boolean peerMaySendNotices(boolean thisRankAnnounced) {
    return (thisRankAnnounced || announcements.count() > 0) && !peerClosed && !hasRemoteFailure();
  }

  /**
   * Hands the calls the receiving rank announced since the last look to the listener, in order;
   * returns whether there were any. Proxy thread only.
   */
  boolean readAnnouncements() {
    return !isClosed() && !peerClosed && announcements.read(announceListener, toPeerSide) > 0;
  }

  @Override
  protected void releaseKeys() {
    for (int i = 0; i < peerSlots.length; i++) {
      transport.release(peerSlots[i]);
      peerSlots[i] = null;
    }
  }

  /** One step: waiting for the receiver's entry, then flushing the data, then done. */
  private final class Request implements NetRequest {
    private ByteBuffer data;
    private long step = -1;
    private int size;
    private CollectiveCall call;

    /**
     * The flushes of the endpoints the data went over, the first {@link #flushing} of these arrays
     * (kept across steps; each flush gets a new completion, which UCX may still call after the
     * request reads as completed); -1 while the data is not put yet.
     */
    private final Completion[] flushes = new Completion[endpoints.length];

    private final UcpRequest[] flushRequests = new UcpRequest[endpoints.length];
    private int flushing = -1;
    private boolean done = true;

    /** Makes this the request of {@code step}, once the slot's previous step is done. */
    Request reuse(ByteBuffer data, long step, int size, CollectiveCall call) {
      if (!done) {
        throw failure(
            "protocol error: step "
                + step
                + " posted while step "
                + this.step
                + " of its slot is still in flight");
      }
      this.data = data;
      this.step = step;
      this.size = size;
      this.call = call;
      this.flushing = -1;
      this.done = false;
      return this;
    }

    void advance() {
      if (done) {
        return;
      }
      if (peerClosed) {
        // it closed having received all it expected, and frees its memory once this end has
        // answered: nothing more may go there
        throw peerClosedFailure();
      }
      if (size <= UcxLayout.INLINE_MAX) {
        if (entryPosted()) {
          putInlineRecord();
          done = true;
        }
        return;
      }
      if (flushing < 0 && !putData()) {
        return;
      }
      for (int i = 0; i < flushing; i++) {
        if (!flushes[i].isDone(flushRequests[i])) {
          return;
        }
        if (flushes[i].error() != null) {
          throw failure("putting step " + step + " failed: " + flushes[i].error());
        }
      }
      putRecord();
      done = true;
    }

    /**
     * Whether the receiver's entry for this step is here: its slot is free, and so is this step's
     * record, which the receiver has read before it freed the slot.
     */
    private boolean entryPosted() {
      int e = UcxLayout.entry(step);
      return (long) LONGS.getAcquire(side, e + UcxLayout.ENTRY_IDX_END) == step + 1
          && (long) LONGS.getAcquire(side, e + UcxLayout.ENTRY_IDX) == step + 1;
    }

    /** Puts the data if the receiver's entry for this step is there; false if not yet. */
    private boolean putData() {
      if (!entryPosted()) {
        return false;
      }
      int e = UcxLayout.entry(step);
      long remote = side.getLong(e + UcxLayout.ENTRY_ADDR);
      int room = side.getInt(e + UcxLayout.ENTRY_SIZE);
      int rkeyId = side.getInt(e + UcxLayout.ENTRY_RKEY);
      if (rkeyId != 0 || size > room) {
        throw failure(
            "protocol error: the receiver's entry for step "
                + step
                + " offers "
                + room
                + " bytes under remote key "
                + rkeyId
                + "; need "
                + size
                + " under key 0");
      }
      long local = slots.getAddress() + (long) FifoLayout.slotOf(step) * stepSize;
      int pieces = Math.max(1, Math.min(endpoints.length, size / MIN_STRIPE));
      int chunk = ((size + pieces - 1) / pieces + 63) & ~63;
      int used = 0;
      for (int off = 0; off < size; off += chunk, used++) {
        int len = Math.min(chunk, size - off);
        endpoints[used].putNonBlockingImplicit(local + off, len, remote + off, peerSlots[used]);
      }
      for (int i = 0; i < used; i++) {
        flushes[i] = new Completion();
        flushRequests[i] = endpoints[i].flushNonBlocking(flushes[i]);
      }
      flushing = used;
      return true;
    }

    /** The data has landed: tell the receiver with the completion record. */
    private void putRecord() {
      int r = writeRecordHeader(0);
      endpoints[0].putNonBlockingImplicit(
          sideAddress + r,
          UcxLayout.RECORD_DATA,
          peerSideAddress + UcxLayout.record(step),
          peerSide[0]);
    }

    /**
     * The record with the data in it, closed by the seq after the data, in one put: a put lands in
     * order (the plain record's two seqs rely on it too), so the closing seq is the last of it to
     * arrive.
     */
    private void putInlineRecord() {
      int r = writeRecordHeader(UcxLayout.FLAG_INLINE);
      side.put(r + UcxLayout.RECORD_DATA, data, 0, size);
      int close = UcxLayout.inlineSeq(size);
      LONGS.setRelease(side, r + close, step + 1);
      endpoints[0].putNonBlockingImplicit(
          sideAddress + r, close + 8, peerSideAddress + UcxLayout.record(step), peerSide[0]);
    }

    /** Fills this step's outgoing record up to its second seq; returns the record's offset. */
    private int writeRecordHeader(int flags) {
      int r = UcxLayout.outRecord(step);
      side.putLong(r + UcxLayout.RECORD_SEQ, step + 1);
      side.putInt(r + UcxLayout.RECORD_SIZE, size);
      side.putInt(r + UcxLayout.RECORD_FLAGS, flags);
      call.encode(side, r + UcxLayout.RECORD_CALL);
      LONGS.setRelease(side, r + UcxLayout.RECORD_SEQ_END, step + 1);
      return r;
    }

    @Override
    public boolean test() {
      checkFailed();
      progress();
      return done;
    }

    @Override
    public int size() {
      return size;
    }
  }
}
