package org.sparkccl.algorithm;

/**
 * Broadcast and reduce as a chain along the ring, pipelined slice by slice: a chain has no cycle,
 * so any number of slices may be in flight.
 *
 * <ul>
 *   <li>broadcast from {@code root}: the root sends, each next rank receives and forwards, the rank
 *       before the root only receives;
 *   <li>reduce to {@code root}: the rank after the root sends, each next rank adds its own and
 *       forwards, the root adds its own and keeps the result.
 * </ul>
 */
public final class RingChain {
  private RingChain() {}

  /** Broadcast of elements {@code [start, start + count)}; source is only read on the root. */
  public static ChannelPlan broadcast(
      int channel,
      int rank,
      int nRanks,
      int root,
      long start,
      long count,
      int elemSize,
      int stepSize) {
    RingPlanner p = new RingPlanner(elemSize);
    int pos = Math.floorMod(rank - root, nRanks);
    Primitive kind =
        pos == 0
            ? Primitive.COPY_SEND
            : pos == nRanks - 1 ? Primitive.RECV : Primitive.RECV_COPY_SEND;
    p.add(kind, start, start, count);
    return p.build(channel, stepSize);
  }

  /** Reduce of elements {@code [start, start + count)}; destination only written on the root. */
  public static ChannelPlan reduce(
      int channel,
      int rank,
      int nRanks,
      int root,
      long start,
      long count,
      int elemSize,
      int stepSize) {
    RingPlanner p = new RingPlanner(elemSize);
    int pos = Math.floorMod(rank - root - 1, nRanks);
    Primitive kind =
        pos == 0
            ? Primitive.SEND
            : pos == nRanks - 1 ? Primitive.RECV_REDUCE_COPY : Primitive.RECV_REDUCE_SEND;
    p.add(kind, start, start, count);
    return p.build(channel, stepSize);
  }
}
