package org.sparkccl.algorithm;

import java.util.ArrayList;
import java.util.List;

/**
 * Ring allReduce: reduce-scatter then all-gather around the ring {@code 0 -> 1 -> ... -> n-1 ->
 * 0}, pipelined through the FIFOs.
 *
 * <p>A channel's part of the buffer is cut into rounds of {@code n} chunks; a chunk is at most
 * {@link #CHUNK_STEPS} slots, so the first send of a round always fits in the send FIFO and the
 * ring cannot deadlock. In round terms, rank {@code r}:
 *
 * <ol>
 *   <li>sends chunk {@code r};
 *   <li>for {@code s = 1 .. n-2}: receives chunk {@code r-s}, adds its own, sends it on;
 *   <li>receives chunk {@code r+1}, adds its own: that chunk is now fully reduced; writes it to
 *       the output and sends it on (the all-gather starts);
 *   <li>for {@code s = 1 .. n-2}: receives chunk {@code r+1-s}, copies it out, sends it on;
 *   <li>receives chunk {@code r+2} and copies it out.
 * </ol>
 *
 * Every rank computes the same chunk lengths, so an empty chunk is skipped on both ends of a
 * connection.
 */
public final class RingAllReduce {
  /** Slots per chunk: NCCL's ALLREDUCE_CHUNKSTEPS (half of the FIFO). */
  public static final int CHUNK_STEPS = 4;

  private RingAllReduce() {}

  /**
   * Plans one channel.
   *
   * @param rank this rank's position in the ring
   * @param nRanks ranks in the ring, at least 2
   * @param offset byte offset of the channel's part of the buffers
   * @param count elements in the channel's part
   * @param elemSize bytes per element
   * @param stepSize bytes per FIFO slot
   */
  public static ChannelPlan plan(
      int channel, int rank, int nRanks, long offset, long count, int elemSize, int stepSize) {
    List<PrimitiveCall> calls = new ArrayList<>();
    long chunkElems = (long) (stepSize / elemSize) * CHUNK_STEPS;
    for (long base = 0; base < count; base += nRanks * chunkElems) {
      long realChunk = Math.min(chunkElems, ceilDiv(count - base, nRanks));
      Chunks chunks = new Chunks(offset, base, realChunk, count, elemSize, nRanks);
      chunks.add(calls, Primitive.SEND, rank);
      for (int s = 1; s <= nRanks - 2; s++) {
        chunks.add(calls, Primitive.RECV_REDUCE_SEND, rank - s);
      }
      chunks.add(calls, Primitive.RECV_REDUCE_COPY_SEND, rank + 1);
      for (int s = 1; s <= nRanks - 2; s++) {
        chunks.add(calls, Primitive.RECV_COPY_SEND, rank + 1 - s);
      }
      chunks.add(calls, Primitive.RECV, rank + 2);
    }
    return ChannelPlan.of(channel, calls, stepSize);
  }

  static long ceilDiv(long a, long b) {
    return (a + b - 1) / b;
  }

  /** The chunks of one round. */
  private record Chunks(
      long offset, long base, long chunkElems, long count, int elemSize, int nRanks) {
    void add(List<PrimitiveCall> calls, Primitive kind, int chunkIndex) {
      int k = Math.floorMod(chunkIndex, nRanks);
      long start = base + k * chunkElems;
      long elems = Math.max(0, Math.min(chunkElems, count - start));
      if (elems > 0) {
        calls.add(new PrimitiveCall(kind, offset + start * elemSize, elems * elemSize));
      }
    }
  }
}
