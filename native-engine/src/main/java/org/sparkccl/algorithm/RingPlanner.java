package org.sparkccl.algorithm;

import java.util.ArrayList;
import java.util.List;

/**
 * Builds a channel's primitive calls for one ring collective. Positions are ring positions ({@code
 * 0 -> 1 -> ... -> n-1 -> 0}); element offsets become byte offsets here, and empty calls are
 * dropped on both ends of a connection alike, since every rank computes the same lengths.
 */
final class RingPlanner {
  /** Slots per chunk: NCCL's ALLREDUCE_CHUNKSTEPS (half of the FIFO), so rounds never deadlock. */
  static final int CHUNK_STEPS = 4;

  private final int elemSize;
  private final List<PrimitiveCall> calls = new ArrayList<>();

  RingPlanner(int elemSize) {
    this.elemSize = elemSize;
  }

  /** Elements in a chunk of at most {@link #CHUNK_STEPS} slots. */
  static long chunkElems(int stepSize, int elemSize) {
    return (long) (stepSize / elemSize) * CHUNK_STEPS;
  }

  void add(Primitive kind, long srcElem, long dstElem, long elems) {
    if (elems > 0) {
      calls.add(new PrimitiveCall(kind, srcElem * elemSize, dstElem * elemSize, elems * elemSize));
    }
  }

  ChannelPlan build(int channel, int stepSize) {
    return ChannelPlan.of(channel, calls, stepSize);
  }

  static long ceilDiv(long a, long b) {
    return (a + b - 1) / b;
  }
}
