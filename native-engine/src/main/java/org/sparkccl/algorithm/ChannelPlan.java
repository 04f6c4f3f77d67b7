package org.sparkccl.algorithm;

import java.util.List;

/** What one channel does for one collective, and how many FIFO steps it sends and receives. */
public record ChannelPlan(int channel, List<PrimitiveCall> calls, long sendSteps, long recvSteps) {
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
