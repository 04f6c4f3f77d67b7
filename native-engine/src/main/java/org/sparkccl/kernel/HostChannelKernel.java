package org.sparkccl.kernel;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.algorithm.ChannelPlan;
import org.sparkccl.algorithm.PrimitiveCall;
import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.device.HostBuffer;
import org.sparkccl.fifo.Fifo;
import org.sparkccl.memory.SharedFile;

/**
 * The "kernel" of one channel on host memory: runs a channel plan's primitives slice by slice over
 * the channel's send FIFO (to the next rank) and receive FIFO (from the previous rank), exactly as
 * a GPU block would. Only the channel's kernel thread calls {@link #run}; the step counters are
 * that thread's own.
 *
 * <p>Either side may instead be a direct edge to a rank of the same host ({@link #sendDirect},
 * {@link #recvDirect}): the kernel then writes into the next rank's receive FIFO in shared memory,
 * or reads its own from there, with no proxy in between. Nobody wakes a wait on such a FIFO (the
 * other kernel runs in another process), so it polls, and since no proxy carries the call beside
 * the data, the slots carry it ({@link SlotCalls}).
 */
public final class HostChannelKernel implements ChannelKernel {
  private final Fifo ownSend;
  private final Fifo ownRecv;
  private final KernelWaiter waiter;
  private final int stepSize;
  private final KernelGuard guard;
  private long sendStep;
  private long recvStep;

  /**
   * The least a received step is summed in while it arrives ({@link #reduceAsItArrives}): a piece
   * costs a wait and a call of the reducer, and a step is summed in pieces only from twice this.
   */
  static final int PIECE_BYTES = 64 << 10;

  /** Where the piece the kernel waits for ends, in bytes of the step ({@link #pieceLanded}). */
  private int pieceEnd;

  private boolean sendFromSources;

  /** Whether the current collective published a step from its buffers: it ends once they left. */
  private boolean sentFromSources;

  // Set before the first collective (the ring's set-up); the task hand-off to the kernel thread
  // publishes them. Calls are null on the kernel's own FIFOs, whose proxy checks the calls.
  private Fifo sendFifo;
  private Fifo recvFifo;
  private SlotCalls sendCalls;
  private SlotCalls recvCalls;
  private final List<SharedFile> sharedMemory = new ArrayList<>();
  private PeerLiveness prevProcess;
  private PeerLiveness nextProcess;

  // made once: a lambda over the step's local would be a new object on every wait of every slice
  private final BooleanSupplier sendRoom = this::sendRoom;
  private final BooleanSupplier recvFilled = this::recvFilled;
  private final BooleanSupplier sendsDone = this::sendsDone;
  private final BooleanSupplier pieceLanded = this::pieceLanded;
  private final KernelWaiter.Check sendCheck = new SideCheck(true);
  private final KernelWaiter.Check recvCheck = new SideCheck(false);

  public HostChannelKernel(Fifo sendFifo, Fifo recvFifo, KernelWaiter waiter, KernelGuard guard) {
    this.ownSend = sendFifo;
    this.ownRecv = recvFifo;
    this.sendFifo = sendFifo;
    this.recvFifo = recvFifo;
    this.waiter = waiter;
    this.stepSize = sendFifo.stepSize();
    this.guard = guard;
  }

  /**
   * Sends into {@code fifo}, the next rank's receive FIFO in shared memory, stamping each slot with
   * its call in {@code calls}; {@code null} for both: back to this kernel's own send FIFO. Only
   * before the first collective.
   */
  public void sendDirect(Fifo fifo, SlotCalls calls) {
    checkStepSize(fifo);
    sendFifo = fifo == null ? ownSend : fifo;
    sendCalls = fifo == null ? null : calls;
  }

  /**
   * Steps of {@link ChannelPlan#IN_PLACE_MIN_BYTES} or more whose bytes lie unchanged in the
   * collective's input or output (the sends of a copy, of a final reduction, the first send of a
   * ring) go out from there on the kernel's own send FIFO: no copy into the slot, and the
   * collective ends only once the connection has sent them, since the caller may change its buffers
   * from then on. Nothing that the kernel writes later in a collective lies under an earlier step
   * it sent this way: each region is sent after its last write, and a region written in place again
   * (the input of an in-place ring allReduce) changes only once data that the earlier send fed has
   * come back around the ring.
   */
  @Override
  public void sendFromSources(boolean allowed) {
    sendFromSources = allowed;
  }

  /** As {@link #sendDirect}, for the receive side: reads the slots the previous rank writes. */
  public void recvDirect(Fifo fifo, SlotCalls calls) {
    checkStepSize(fifo);
    recvFifo = fifo == null ? ownRecv : fifo;
    recvCalls = fifo == null ? null : calls;
  }

  private void checkStepSize(Fifo fifo) {
    if (fifo != null && fifo.stepSize() != stepSize) {
      throw new IllegalArgumentException(
          "a direct FIFO of stepSize " + fifo.stepSize() + "; this kernel's is " + stepSize);
    }
  }

  /**
   * The processes of the previous and next rank on direct edges, or null (not direct, or not
   * visible from here); only before the first collective.
   */
  public void watchPeers(PeerLiveness prev, PeerLiveness next) {
    prevProcess = prev;
    nextProcess = next;
  }

  /** Unmaps {@code memory} (what direct FIFOs lie in) when the kernel closes, not before. */
  public void closeWith(SharedFile memory) {
    sharedMemory.add(memory);
  }

  /**
   * One collective's work for this channel, on host memory: one holder per kernel, refilled for
   * each collective (the kernel runs one at a time), so running a collective allocates nothing.
   */
  private static final class Work {
    private ByteBuffer src;
    private ByteBuffer dst;
    private DataType type;
    private ReduceOp op;
    private int nRanks;
    private CollectiveCall call;

    ByteBuffer src() {
      return src;
    }

    ByteBuffer dst() {
      return dst;
    }

    DataType type() {
      return type;
    }

    ReduceOp op() {
      return op;
    }

    int nRanks() {
      return nRanks;
    }
  }

  private final Work work = new Work();

  /** This kernel's own send FIFO, which the proxy reads; a direct edge bypasses it. */
  @Override
  public Fifo sendFifo() {
    return ownSend;
  }

  @Override
  public Fifo recvFifo() {
    return ownRecv;
  }

  @Override
  public void run(ChannelWork cw) {
    Work w = work;
    w.src = ((HostBuffer) cw.src()).memory();
    w.dst = ((HostBuffer) cw.dst()).memory();
    w.type = cw.type();
    w.op = cw.op();
    w.nRanks = cw.nRanks();
    w.call = cw.call();
    List<PrimitiveCall> calls = cw.plan().calls();
    // indexed, not for-each: no iterator per collective
    for (int i = 0; i < calls.size(); i++) {
      PrimitiveCall call = calls.get(i);
      long done = 0;
      while (done < call.bytes()) {
        int len = (int) Math.min(stepSize, call.bytes() - done);
        slice(w, call, (int) (call.srcOffset() + done), (int) (call.dstOffset() + done), len);
        done += len;
      }
    }
    if (sentFromSources) {
      sentFromSources = false;
      waiter.await(sendsDone, sendCheck);
    }
  }

  private void slice(Work w, PrimitiveCall call, int src, int dst, int len) {
    switch (call.kind()) {
      case SEND -> send(w, w.src(), src, len);
      case COPY_SEND -> {
        if (w.src() != w.dst() || src != dst) {
          w.dst().put(dst, w.src(), src, len);
        }
        send(w, w.src(), src, len);
      }
      case RECV -> {
        copyOut(w, awaitRecvSlot(w, len), dst, len);
        releaseRecv();
      }
      case RECV_REDUCE_SEND -> {
        ByteBuffer out = awaitSendSlot();
        reduceAsItArrives(w, src, out, 0, len, false);
        publish(w, len);
        releaseRecv();
      }
      case RECV_REDUCE_COPY -> {
        reduceAsItArrives(w, src, w.dst(), dst, len, true);
        releaseRecv();
      }
      case RECV_REDUCE_COPY_SEND -> {
        reduceAsItArrives(w, src, w.dst(), dst, len, true);
        send(w, w.dst(), dst, len);
        releaseRecv();
      }
      case RECV_COPY_SEND -> {
        copyOut(w, awaitRecvSlot(w, len), dst, len);
        send(w, w.dst(), dst, len);
        releaseRecv();
      }
    }
  }

  /**
   * Copies a received step into the output, unless the proxy received it there already ({@code
   * RecvProxyOp#receiveInto}): then the FIFO holds it elsewhere than the slot.
   */
  private void copyOut(Work w, ByteBuffer in, int dst, int len) {
    if (in == recvFifo.slot(recvStep)) {
      w.dst().put(dst, in, 0, len);
    }
  }

  /**
   * Sends bytes {@code [offset, offset + len)} of {@code region}, which stay unchanged until the
   * collective ends: from the region itself where {@link #sendFromSources} allows, else copied into
   * the slot.
   */
  private void send(Work w, ByteBuffer region, int offset, int len) {
    ByteBuffer slot = awaitSendSlot();
    if (sendFromSources
        && len >= ChannelPlan.IN_PLACE_MIN_BYTES
        && sendFifo == ownSend
        && region.isDirect()) {
      sendFifo.publishFrom(sendStep, region.slice(offset, len));
      sendStep++;
      sentFromSources = true;
      return;
    }
    slot.put(0, region, offset, len);
    publish(w, len);
  }

  /**
   * {@code out = in op src} for the received step of {@code len} bytes, and where {@code last} (the
   * result is complete here) the division of {@code avg}. On the kernel's own receive FIFO it sums
   * the step in pieces as the proxy says they land ({@link Fifo#arrived}), so that the sum of a
   * large step overlaps its arrival instead of following it: a ring step waits for its
   * predecessor's whole result, and the sum of each step was otherwise added to every step's time.
   */
  private void reduceAsItArrives(
      Work w, int src, ByteBuffer out, int outOffset, int len, boolean last) {
    int done = 0;
    if (recvCalls == null && len >= 2 * PIECE_BYTES) {
      long step = recvStep;
      ByteBuffer slot = recvFifo.slot(step);
      int unit = w.type().size();
      while (len - done >= 2 * PIECE_BYTES) {
        pieceEnd = done + PIECE_BYTES;
        waiter.await(pieceLanded, recvCheck);
        if (recvFifo.isFilled(step)) {
          break; // the rest at once, after the checks of a whole step
        }
        int landed = Math.min(recvFifo.arrived(step), len) & -unit;
        reduceRange(w, slot, done, src + done, out, outOffset + done, landed - done, last);
        done = landed;
      }
    }
    ByteBuffer in = awaitRecvSlot(w, len);
    reduceRange(w, in, done, src + done, out, outOffset + done, len - done, last);
  }

  /** {@code out = in op src} over {@code bytes} bytes, and the division of {@code avg} if last. */
  private static void reduceRange(
      Work w,
      ByteBuffer in,
      int inOffset,
      int src,
      ByteBuffer out,
      int outOffset,
      int bytes,
      boolean last) {
    int elems = bytes / w.type().size();
    Reducer.reduce(w.type(), w.op(), in, inOffset, w.src(), src, out, outOffset, elems);
    if (last && w.op() == ReduceOp.AVG) {
      Reducer.divide(w.type(), out, outOffset, elems, w.nRanks());
    }
  }

  /** Whether the step the kernel sums in pieces has arrived up to {@link #pieceEnd}, or whole. */
  private boolean pieceLanded() {
    return recvFifo.arrived(recvStep) >= pieceEnd || recvFifo.isFilled(recvStep);
  }

  private boolean sendRoom() {
    return sendFifo.hasRoomFor(sendStep);
  }

  /** Whether the connection has sent every step published so far (head caught up). */
  private boolean sendsDone() {
    return sendFifo.head() >= sendStep;
  }

  private boolean recvFilled() {
    return recvFifo.isFilled(recvStep);
  }

  /** The deadline and abort of a wait on one side; a direct side polls at the shared period. */
  private final class SideCheck implements KernelWaiter.Check {
    private final boolean sending;

    /**
     * The wait's text, built only for an error: a spinning wait checks on every pass, and building
     * the text each time made a spinning chain broadcast of 64 KiB 4 to 10 times slower.
     */
    private final Supplier<String> what;

    SideCheck(boolean sending) {
      this.sending = sending;
      this.what = () -> guard.describe(sending);
    }

    @Override
    public void check(long waitedNanos) {
      guard.checkWait(waitedNanos, what);
      checkPeerAlive(sending, waitedNanos);
    }

    @Override
    public long parkNanos() {
      SlotCalls direct = sending ? sendCalls : recvCalls;
      return direct != null ? PeerEdge.SHARED_PARK_NANOS : KernelWaiter.Check.super.parkNanos();
    }
  }

  private ByteBuffer awaitSendSlot() {
    waiter.await(sendRoom, sendCheck);
    return sendFifo.slot(sendStep);
  }

  private void publish(Work w, int len) {
    if (sendCalls != null) {
      sendCalls.stamp(sendStep, w.call);
    }
    sendFifo.publish(sendStep, len);
    sendStep++;
  }

  private ByteBuffer awaitRecvSlot(Work w, int expected) {
    long step = recvStep;
    waiter.await(recvFilled, recvCheck);
    if (recvCalls != null) {
      recvCalls.verify(step, w.call);
    }
    int got = recvFifo.size(step);
    if (got != expected) {
      throw new IllegalStateException(
          guard.describe(false)
              + ": received a slice of "
              + got
              + " bytes where this rank"
              + " expected "
              + expected
              + " (step "
              + step
              + "); the ranks disagree on the call");
    }
    return recvFifo.bytesOf(step);
  }

  private void releaseRecv() {
    recvFifo.release(recvStep);
    recvStep++;
  }

  /** Throws when the process on the other end of a direct edge this wait is on has exited. */
  private void checkPeerAlive(boolean sending, long waitedNanos) {
    PeerLiveness peer = sending ? nextProcess : prevProcess;
    if (peer != null && peer.hasExited(waitedNanos)) {
      throw peer.exited(guard.describe(sending), waitedNanos);
    }
  }

  /** Unmaps the shared memory of direct edges; the kernel thread has stopped. */
  @Override
  public void close() {
    sharedMemory.forEach(SharedFile::close);
    sharedMemory.clear();
  }
}
