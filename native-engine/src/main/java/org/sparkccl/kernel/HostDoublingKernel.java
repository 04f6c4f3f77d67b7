package org.sparkccl.kernel;

import java.nio.ByteBuffer;
import org.sparkccl.DataType;
import org.sparkccl.ReduceOp;
import org.sparkccl.fifo.FifoLayout;

/**
 * Recursive doubling allReduce on host memory ({@code algorithm.RecursiveDoubling} gives the
 * partners), one exchange after the other, each slice by slice: the rank copies its current slice
 * into the send FIFO, then reduces the partner's slice with it into the destination. Both ranks of
 * a pair compute {@code lower op higher}, the lower rank's operand first, and NaNs are made
 * canonical after each reduction ({@link NanBits}), so that both end with the same bits; ranges
 * that one rank alone reduces skip that ({@link Exchange#partnerReducesSameRange}).
 *
 * <p>Rabenseifner's allReduce ({@code algorithm.RecursiveHalving}) runs here too: its exchanges
 * send one byte range and receive another, reducing (halving rounds) or copying ({@link
 * Kind#EXCHANGE_COPY}, the allGather rounds). So does a reduceScatter by recursive halving ({@code
 * RecursiveHalving.scatterRounds}): its rounds before the last reduce into a scratch buffer laid
 * out as the input, since the destination holds only this rank's block, and the last into the
 * destination. And an allGather by recursive doubling ({@code RecursiveHalving.gatherRounds}):
 * {@link Kind#EXCHANGE_COPY} rounds, the first sending from the input, which holds one block, and
 * placing that block in the destination as it goes.
 *
 * <p>Over a socket, slices of {@link PeerEdge#SOURCE_MIN_BYTES} or more leave from the current data
 * itself, not from a copy in the slot; the exchange then waits for each such slice to have left
 * before it writes its range, and for all of them before it ends.
 */
public final class HostDoublingKernel {
  /**
   * Slices a rank sends before it waits for the partner's first: waiting for slice {@code s} right
   * after sending it would cost a hop per slice; half the FIFO's slots keep the sends from ever
   * waiting for room while the partner reduces.
   */
  static final int AHEAD = FifoLayout.STEPS / 2;

  private HostDoublingKernel() {}

  /** What one exchange does with its edges; either edge may be null where the kind has none. */
  public enum Kind {
    /** Send the current data and reduce what the partner sends with it. */
    EXCHANGE,
    /** Send the current data only (a rank that folds into its neighbour). */
    SEND,
    /** Reduce what the partner sends with the current data (the rank a neighbour folds into). */
    RECEIVE_REDUCE,
    /** Take what the partner sends as the result (a folded rank getting the result back). */
    RECEIVE_COPY,
    /** Send the current data and take what the partner sends (an allGather round). */
    EXCHANGE_COPY
  }

  /**
   * One exchange with one partner; {@code partnerLower}: the partner's operand goes first. It sends
   * {@code sendBytes} from {@code sendOffset} of the current data and receives {@code recvBytes}
   * into {@code recvOffset} of the destination.
   */
  public record Exchange(
      Kind kind,
      PeerEdge send,
      PeerEdge recv,
      boolean partnerLower,
      long sendOffset,
      long sendBytes,
      long recvOffset,
      long recvBytes) {
    /** An exchange of the whole buffer of {@code bytes} both ways. */
    public Exchange(Kind kind, PeerEdge send, PeerEdge recv, boolean partnerLower, long bytes) {
      this(kind, send, recv, partnerLower, 0, bytes, 0, bytes);
    }

    /**
     * Whether the partner reduces the same range too (a recursive doubling round), so both must
     * make their NaNs canonical to end with the same bits. A halving round's halves, and the sum of
     * a rank folded in, are each computed by one rank only and reach the others as copies; they
     * skip that pass, which costs about as much as the sum itself.
     */
    boolean partnerReducesSameRange() {
      return kind == Kind.EXCHANGE && sendOffset == recvOffset && sendBytes == recvBytes;
    }
  }

  /**
   * One allReduce: the exchanges in order; {@code finalAt} is the index of the exchange before
   * which this rank holds the complete result of bytes {@code [finalOffset, finalOffset +
   * finalBytes)}, where {@code AVG} divides them ({@code exchanges.length} when that is after the
   * last; -1 when the result arrives already divided). It depends only on the collective's shape:
   * launches of the same shape reuse it, each with its own {@link HostOperands}. The exchanges
   * before {@code scratchUntil} write the operands' scratch buffer instead of the destination.
   */
  public record Work(
      Exchange[] exchanges,
      int finalAt,
      long finalOffset,
      long finalBytes,
      long bytes,
      DataType type,
      int nRanks,
      int stepSize,
      int scratchUntil) {}

  public static void run(Work w, HostOperands o, KernelWaiter waiter, KernelGuard guard) {
    ByteBuffer current = o.src;
    int currentShift = o.srcShift;
    Exchange[] ex = w.exchanges();
    for (int i = 0; i < ex.length; i++) {
      if (i == w.finalAt()) {
        divideIfAverage(w, o);
      }
      boolean toScratch = i < w.scratchUntil();
      ByteBuffer out = toScratch ? o.scratch : o.dst;
      int outShift = toScratch ? 0 : o.dstShift;
      exchange(w, o, ex[i], current, currentShift, out, outShift, waiter, guard);
      if (ex[i].kind() != Kind.SEND) {
        current = out;
        currentShift = outShift;
      }
    }
    if (ex.length == w.finalAt()) {
      divideIfAverage(w, o);
    }
  }

  private static void divideIfAverage(Work w, HostOperands o) {
    if (o.op == ReduceOp.AVG) {
      int elems = (int) (w.finalBytes() / w.type().size());
      Reducer.divide(w.type(), o.dst, (int) w.finalOffset() - o.dstShift, elems, w.nRanks());
    }
  }

  /**
   * One exchange, slice by slice, reading {@code current} and writing {@code out} at the exchange's
   * offsets less {@code currentShift} and {@code outShift}. Sending runs {@link #AHEAD} slices
   * before the reduction, and reads slices the reduction has not written yet (or, in halving and
   * allGather rounds, a range it never writes), so in place is safe. A copy exchange that sends
   * from elsewhere than {@code out} (an allGather's first round) also places what it sends there.
   */
  private static void exchange(
      Work w,
      HostOperands o,
      Exchange e,
      ByteBuffer current,
      int currentShift,
      ByteBuffer out,
      int outShift,
      KernelWaiter waiter,
      KernelGuard guard) {
    boolean placeSent =
        e.kind() == Kind.EXCHANGE_COPY && (current != out || currentShift != outShift);
    int step = w.stepSize();
    long sendSlices = e.send() == null ? 0 : (e.sendBytes() + step - 1) / step;
    long recvSlices = e.recv() == null ? 0 : (e.recvBytes() + step - 1) / step;
    long sent = 0;
    long sendBase = e.send() == null ? 0 : e.send().step();
    for (long s = 0; s < Math.max(sendSlices, recvSlices); s++) {
      while (sent < sendSlices && sent <= s + AHEAD) {
        int at = (int) (e.sendOffset() + sent * step);
        int len = (int) Math.min(step, e.sendOffset() + e.sendBytes() - at);
        e.send().send(current, at - currentShift, len, waiter, guard, o.what);
        if (placeSent) {
          out.put(at - outShift, current, at - currentShift, len);
        }
        sent++;
      }
      if (s >= recvSlices) {
        continue;
      }
      int len = (int) Math.min(step, e.recvBytes() - s * step);
      int at = (int) (e.recvOffset() + s * step);
      ByteBuffer in = e.recv().awaitFilled(len, waiter, guard, o.what);
      if (e.send() != null) {
        // the slice sent from this range may still be leaving from it (in place, or an input
        // that is also the output); those of later slices lie elsewhere
        e.send().awaitSent(sendBase + s, waiter, guard, o.what);
      }
      if (e.kind() == Kind.RECEIVE_COPY || e.kind() == Kind.EXCHANGE_COPY) {
        out.put(at - outShift, in, 0, len);
      } else {
        reduce(w, o, e, in, current, at - currentShift, out, at - outShift, len);
      }
      e.recv().release();
    }
    if (e.send() != null) {
      // later exchanges, and the caller once the collective returns, may change what was sent
      e.send().awaitSent(Long.MAX_VALUE, waiter, guard, o.what);
    }
  }

  /**
   * Reduces the received slice {@code in} with {@code bytes} of {@code current} from {@code
   * currentAt} into {@code out} at {@code outAt}: the partner's operand first where it is the lower
   * rank, NaNs canonical where the partner reduces the same range.
   */
  private static void reduce(
      Work w,
      HostOperands o,
      Exchange e,
      ByteBuffer in,
      ByteBuffer current,
      int currentAt,
      ByteBuffer out,
      int outAt,
      int bytes) {
    int elems = bytes / w.type().size();
    ByteBuffer first = e.partnerLower() ? in : current;
    int firstAt = e.partnerLower() ? 0 : currentAt;
    ByteBuffer second = e.partnerLower() ? current : in;
    int secondAt = e.partnerLower() ? currentAt : 0;
    if (e.partnerReducesSameRange()) {
      Reducer.reduceCanonical(w.type(), o.op, first, firstAt, second, secondAt, out, outAt, elems);
    } else {
      Reducer.reduce(w.type(), o.op, first, firstAt, second, secondAt, out, outAt, elems);
    }
  }
}
