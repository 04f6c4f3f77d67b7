package org.sparkccl.algorithm;

import java.util.List;

/**
 * Walks the receive steps of a channel plan in order, sliced as a host kernel slices them, and says
 * which of them land unchanged in the output ({@link Primitive#RECV}, {@link
 * Primitive#RECV_COPY_SEND}) and are large enough to be received straight there: a receiving proxy
 * that knows this before the kernel reaches the step saves the kernel the copy out of the slot.
 * Reused from one collective to the next; one thread at a time.
 */
public final class ReceiveCursor {
  private List<PrimitiveCall> calls = List.of();
  private int stepSize;
  private int minBytes;
  private int index;
  private long done;
  private int length;

  /** Starts over at the first receive step of {@code plan}. */
  public void reset(ChannelPlan plan, int stepSize, int minBytes) {
    this.calls = plan.calls();
    this.stepSize = stepSize;
    this.minBytes = minBytes;
    this.index = 0;
    this.done = 0;
    this.length = 0;
  }

  /**
   * Moves to the next receive step: its byte offset in the output where its bytes land there
   * unchanged and number at least {@code minBytes}, else -1 (it goes through its slot). The step's
   * length is then {@link #length()}.
   *
   * @throws IllegalStateException past the plan's last receive step
   */
  public long next() {
    while (index < calls.size() && !calls.get(index).kind().receives()) {
      index++;
    }
    if (index == calls.size()) {
      throw new IllegalStateException("a receive step past the plan's last one");
    }
    PrimitiveCall call = calls.get(index);
    length = (int) Math.min(stepSize, call.bytes() - done);
    boolean unchanged = call.kind() == Primitive.RECV || call.kind() == Primitive.RECV_COPY_SEND;
    long at = unchanged && length >= minBytes ? call.dstOffset() + done : -1;
    done += length;
    if (done == call.bytes()) {
      index++;
      done = 0;
    }
    return at;
  }

  /** The length of the step {@link #next()} moved to. */
  public int length() {
    return length;
  }
}
