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

  /**
   * The smallest piece a chunk is cut into ({@link #pieceElems}): pieces this large still move in
   * place over sockets ({@link ChannelPlan#IN_PLACE_MIN_BYTES}), and each costs a step's overhead.
   */
  static final int PIECE_MIN_BYTES = ChannelPlan.IN_PLACE_MIN_BYTES;

  private final int elemSize;
  private final List<PrimitiveCall> calls = new ArrayList<>();

  RingPlanner(int elemSize) {
    this.elemSize = elemSize;
  }

  /** Elements in a chunk of at most {@link #CHUNK_STEPS} slots. */
  static long chunkElems(int stepSize, int elemSize) {
    return (long) (stepSize / elemSize) * CHUNK_STEPS;
  }

  /**
   * Elements in one call of a ring chunk of {@code chunkElems}: the whole chunk where it fills
   * {@link #CHUNK_STEPS} slots (its calls are sliced into full steps anyway), else about a {@link
   * #CHUNK_STEPS}-th of it, in whole {@link ChannelSplit#ALIGN_BYTES}, and no less than {@link
   * #PIECE_MIN_BYTES} or a slot, whichever is smaller. Either way the chunk takes at most {@link
   * #CHUNK_STEPS} steps.
   *
   * <p>A chunk moved as one step is stored and forwarded whole at every hop: the next rank starts
   * its reduction, and the hop after it, only once the last byte has arrived. In pieces, sending,
   * receiving and reducing overlap along the ring, as NCCL's slices do.
   */
  static long pieceElems(long chunkElems, int stepSize, int elemSize) {
    long chunkBytes = chunkElems * elemSize;
    if (chunkBytes >= (long) CHUNK_STEPS * stepSize) {
      return chunkElems;
    }
    long quarter = ceilDiv(ceilDiv(chunkBytes, CHUNK_STEPS), ChannelSplit.ALIGN_BYTES);
    long bytes = Math.max(quarter * ChannelSplit.ALIGN_BYTES, Math.min(PIECE_MIN_BYTES, stepSize));
    // a piece of more than a slot would end in a partly filled one: then whole slots each
    long whole = bytes <= stepSize ? bytes : ceilDiv(bytes, stepSize) * stepSize;
    return Math.min(chunkElems, whole / elemSize);
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
