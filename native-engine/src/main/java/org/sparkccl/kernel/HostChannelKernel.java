package org.sparkccl.kernel;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.function.BooleanSupplier;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.algorithm.PrimitiveCall;
import org.sparkccl.device.HostBuffer;
import org.sparkccl.fifo.Fifo;

/**
 * The "kernel" of one channel on host memory: runs a channel plan's primitives slice by slice over
 * the channel's send FIFO (to the next rank) and receive FIFO (from the previous rank), exactly as
 * a GPU block would. Only the channel's kernel thread calls {@link #run}; the step counters are
 * that thread's own.
 */
public final class HostChannelKernel implements ChannelKernel {
  private final Fifo sendFifo;
  private final Fifo recvFifo;
  private final KernelWaiter waiter;
  private final int stepSize;
  private final KernelGuard guard;
  private long sendStep;
  private long recvStep;

  // made once: a lambda over the step's local would be a new object on every wait of every slice
  private final BooleanSupplier sendRoom = this::sendRoom;
  private final BooleanSupplier recvFilled = this::recvFilled;
  private final KernelWaiter.Check sendCheck = this::checkSend;
  private final KernelWaiter.Check recvCheck = this::checkRecv;

  public HostChannelKernel(Fifo sendFifo, Fifo recvFifo, KernelWaiter waiter, KernelGuard guard) {
    this.sendFifo = sendFifo;
    this.recvFifo = recvFifo;
    this.waiter = waiter;
    this.stepSize = sendFifo.stepSize();
    this.guard = guard;
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

  @Override
  public Fifo sendFifo() {
    return sendFifo;
  }

  @Override
  public Fifo recvFifo() {
    return recvFifo;
  }

  @Override
  public void run(ChannelWork cw) {
    Work w = work;
    w.src = ((HostBuffer) cw.src()).memory();
    w.dst = ((HostBuffer) cw.dst()).memory();
    w.type = cw.type();
    w.op = cw.op();
    w.nRanks = cw.nRanks();
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
  }

  private void slice(Work w, PrimitiveCall call, int src, int dst, int len) {
    int elems = len / w.type().size();
    switch (call.kind()) {
      case SEND -> {
        awaitSendSlot().put(0, w.src(), src, len);
        publish(len);
      }
      case COPY_SEND -> {
        if (w.src() != w.dst() || src != dst) {
          w.dst().put(dst, w.src(), src, len);
        }
        awaitSendSlot().put(0, w.src(), src, len);
        publish(len);
      }
      case RECV -> {
        w.dst().put(dst, awaitRecvSlot(len), 0, len);
        releaseRecv();
      }
      case RECV_REDUCE_SEND -> {
        ByteBuffer in = awaitRecvSlot(len);
        ByteBuffer out = awaitSendSlot();
        Reducer.reduce(w.type(), w.op(), in, 0, w.src(), src, out, 0, elems);
        publish(len);
        releaseRecv();
      }
      case RECV_REDUCE_COPY -> {
        reduceFinal(w, awaitRecvSlot(len), src, dst, elems);
        releaseRecv();
      }
      case RECV_REDUCE_COPY_SEND -> {
        ByteBuffer in = awaitRecvSlot(len);
        ByteBuffer out = awaitSendSlot();
        reduceFinal(w, in, src, dst, elems);
        out.put(0, w.dst(), dst, len);
        publish(len);
        releaseRecv();
      }
      case RECV_COPY_SEND -> {
        ByteBuffer in = awaitRecvSlot(len);
        ByteBuffer out = awaitSendSlot();
        w.dst().put(dst, in, 0, len);
        out.put(0, in, 0, len);
        publish(len);
        releaseRecv();
      }
    }
  }

  /** {@code dst = in op src}, then the division of {@code avg}: the result is complete here. */
  private static void reduceFinal(Work w, ByteBuffer in, int src, int dst, int elems) {
    Reducer.reduce(w.type(), w.op(), in, 0, w.src(), src, w.dst(), dst, elems);
    if (w.op() == ReduceOp.AVG) {
      Reducer.divide(w.type(), w.dst(), dst, elems, w.nRanks());
    }
  }

  private boolean sendRoom() {
    return sendFifo.hasRoomFor(sendStep);
  }

  private boolean recvFilled() {
    return recvFifo.isFilled(recvStep);
  }

  private void checkSend(long waited) {
    check(waited, true);
  }

  private void checkRecv(long waited) {
    check(waited, false);
  }

  private ByteBuffer awaitSendSlot() {
    waiter.await(sendRoom, sendCheck);
    return sendFifo.slot(sendStep);
  }

  private void publish(int len) {
    sendFifo.publish(sendStep, len);
    sendStep++;
  }

  private ByteBuffer awaitRecvSlot(int expected) {
    long step = recvStep;
    waiter.await(recvFilled, recvCheck);
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
    return recvFifo.slot(step);
  }

  private void releaseRecv() {
    recvFifo.release(recvStep);
    recvStep++;
  }

  private void check(long waitedNanos, boolean sending) {
    guard.checkWait(waitedNanos, guard.describe(sending));
  }
}
