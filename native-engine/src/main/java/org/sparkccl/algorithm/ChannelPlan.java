package org.sparkccl.algorithm;

import java.util.List;

/** What one channel does for one collective, and how many FIFO steps it sends and receives. */
public record ChannelPlan(int channel, List<PrimitiveCall> calls, long sendSteps, long recvSteps) {
  /**
   * Ring steps of at least this many bytes skip the FIFO's slots where the connections allow it: a
   * host kernel sends them from the collective's buffers and the proxy receives them straight into
   * its output when they land there unchanged ({@code HostChannelKernel#sendFromSources}, {@link
   * ReceiveCursor}). A copy through the slot then costs more than the slice that names the memory,
   * and small steps allocate nothing.
   */
  public static final int IN_PLACE_MIN_BYTES = 64 << 10;

  public static ChannelPlan of(int channel, List<PrimitiveCall> calls, int stepSize) {
    long sends = 0;
    long recvs = 0;
    for (PrimitiveCall c : calls) {
      long steps = c.steps(stepSize);
      sends += c.kind().sends() ? steps : 0;
      recvs += c.kind().receives() ? steps : 0;
    }
    return new ChannelPlan(channel, List.copyOf(calls), sends, recvs);
  }
}
