package org.sparkccl.algorithm;

/**
 * allGather and reduceScatter around the ring, in rounds of pieces of at most {@link
 * RingPlanner#CHUNK_STEPS} slots per rank (every rank sends before it receives, so a larger piece
 * could fill every FIFO of the ring and deadlock it).
 *
 * <p>Buffers follow NCCL: allGather's output holds {@code n} blocks of {@code count} elements,
 * block {@code k} from rank {@code k}; reduceScatter's input holds {@code n} blocks and rank {@code
 * r} gets the reduction of block {@code r}. {@code inPlaceOffset} is where this rank's own block
 * sits in the source: 0 normally, {@code rank * count} when source and destination are the same
 * buffer.
 */
public final class RingGather {
  private RingGather() {}

  /** allGather of elements {@code [start, start + len)} of each rank's block. */
  public static ChannelPlan allGather(
      int channel,
      int rank,
      int nRanks,
      long blockCount,
      long start,
      long len,
      long srcBase,
      int elemSize,
      int stepSize) {
    RingPlanner p = new RingPlanner(elemSize);
    long piece = RingPlanner.chunkElems(stepSize, elemSize);
    for (long off = start; off < start + len; off += piece) {
      long n = Math.min(piece, start + len - off);
      p.add(Primitive.COPY_SEND, srcBase + off, block(rank, nRanks, blockCount) + off, n);
      for (int s = 1; s <= nRanks - 2; s++) {
        long dst = block(rank - s, nRanks, blockCount) + off;
        p.add(Primitive.RECV_COPY_SEND, dst, dst, n);
      }
      long last = block(rank + 1, nRanks, blockCount) + off;
      p.add(Primitive.RECV, last, last, n);
    }
    return p.build(channel, stepSize);
  }

  /** reduceScatter of elements {@code [start, start + len)} of each block. */
  public static ChannelPlan reduceScatter(
      int channel,
      int rank,
      int nRanks,
      long blockCount,
      long start,
      long len,
      long dstBase,
      int elemSize,
      int stepSize) {
    RingPlanner p = new RingPlanner(elemSize);
    long piece = RingPlanner.chunkElems(stepSize, elemSize);
    for (long off = start; off < start + len; off += piece) {
      long n = Math.min(piece, start + len - off);
      long first = block(rank - 1, nRanks, blockCount) + off;
      p.add(Primitive.SEND, first, first, n);
      for (int s = 1; s <= nRanks - 2; s++) {
        long src = block(rank - 1 - s, nRanks, blockCount) + off;
        p.add(Primitive.RECV_REDUCE_SEND, src, src, n);
      }
      p.add(Primitive.RECV_REDUCE_COPY, block(rank, nRanks, blockCount) + off, dstBase + off, n);
    }
    return p.build(channel, stepSize);
  }

  private static long block(int k, int nRanks, long blockCount) {
    return Math.floorMod(k, nRanks) * blockCount;
  }
}
