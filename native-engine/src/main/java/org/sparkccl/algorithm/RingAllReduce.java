package org.sparkccl.algorithm;

/**
 * Ring allReduce: reduce-scatter then all-gather around the ring, pipelined through the FIFOs.
 *
 * <p>A channel's part of the buffer is cut into rounds of {@code n} chunks of at most {@link
 * RingPlanner#CHUNK_STEPS} slots, so the first send of a round always fits in the send FIFO and the
 * ring cannot deadlock. In round terms, rank {@code r}:
 *
 * <ol>
 *   <li>sends chunk {@code r};
 *   <li>for {@code s = 1 .. n-2}: receives chunk {@code r-s}, adds its own, sends it on;
 *   <li>receives chunk {@code r+1}, adds its own: that chunk is now fully reduced; writes it to the
 *       output and sends it on (the all-gather starts);
 *   <li>for {@code s = 1 .. n-2}: receives chunk {@code r+1-s}, copies it out, sends it on;
 *   <li>receives chunk {@code r+2} and copies it out.
 * </ol>
 */
public final class RingAllReduce {
  /** Slots per chunk: NCCL's ALLREDUCE_CHUNKSTEPS (half of the FIFO). */
  public static final int CHUNK_STEPS = RingPlanner.CHUNK_STEPS;

  private RingAllReduce() {}

  /**
   * Plans one channel: elements {@code [start, start + count)} of the buffers.
   *
   * @param rank this rank's ring position; {@code nRanks} at least 2
   */
  public static ChannelPlan plan(
      int channel, int rank, int nRanks, long start, long count, int elemSize, int stepSize) {
    RingPlanner p = new RingPlanner(elemSize);
    long chunkElems = RingPlanner.chunkElems(stepSize, elemSize);
    for (long base = 0; base < count; base += nRanks * chunkElems) {
      // the last round's chunks stay aligned too (ChannelSplit.ALIGN_BYTES); the last is shorter
      long real = Math.min(chunkElems, ChannelSplit.alignedShare(count - base, nRanks, elemSize));
      long piece = RingPlanner.pieceElems(real, stepSize, elemSize);
      Round round = new Round(p, start + base, real, piece, start + count, nRanks);
      round.add(Primitive.SEND, rank);
      for (int s = 1; s <= nRanks - 2; s++) {
        round.add(Primitive.RECV_REDUCE_SEND, rank - s);
      }
      round.add(Primitive.RECV_REDUCE_COPY_SEND, rank + 1);
      for (int s = 1; s <= nRanks - 2; s++) {
        round.add(Primitive.RECV_COPY_SEND, rank + 1 - s);
      }
      round.add(Primitive.RECV, rank + 2);
    }
    return p.build(channel, stepSize);
  }

  /**
   * The chunks of one round, at the same offsets in source and destination, each added as calls of
   * at most {@code piece} elements.
   */
  private record Round(RingPlanner p, long base, long chunk, long piece, long end, int nRanks) {
    void add(Primitive kind, int chunkIndex) {
      long first = base + Math.floorMod(chunkIndex, nRanks) * chunk;
      long length = Math.max(0, Math.min(chunk, end - first));
      for (long done = 0; done < length; done += piece) {
        p.add(kind, first + done, first + done, Math.min(piece, length - done));
      }
    }
  }
}
