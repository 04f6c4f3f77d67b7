package org.sparkccl.comm;

import org.sparkccl.algorithm.ChannelPlan;
import org.sparkccl.algorithm.RingAllReduce;
import org.sparkccl.algorithm.RingChain;
import org.sparkccl.algorithm.RingGather;

/**
 * The last ring plan of each channel, reused while the next collective has the same shape (kind,
 * root, count, element size and channels used): a training loop calls the same allReduce again and
 * again, and planning it anew built a list of primitive calls every time. Plans are immutable. Used
 * under the launch lock only. A miss plans from the call itself: everything a ring plan depends on
 * is in it and the launch's local offsets, so a launch hands over no planner object (a lambda per
 * call was about 24 bytes of garbage a rank).
 */
final class PlanCache {
  private final int rank;
  private final int nRanks;
  private final int stepSize;
  private final ChannelPlan[] plans;
  private final CollectiveCall.Kind[] kinds;
  private final int[] roots;
  private final long[] counts;
  private final int[] elemSizes;
  private final int[] useds;
  private final long[] localSrcs;
  private final long[] localDsts;

  PlanCache(int channels, int rank, int nRanks, int stepSize) {
    this.rank = rank;
    this.nRanks = nRanks;
    this.stepSize = stepSize;
    plans = new ChannelPlan[channels];
    kinds = new CollectiveCall.Kind[channels];
    roots = new int[channels];
    counts = new long[channels];
    elemSizes = new int[channels];
    useds = new int[channels];
    localSrcs = new long[channels];
    localDsts = new long[channels];
  }

  /**
   * Channel {@code c}'s plan for {@code call} over {@code used} channels (elements {@code [start,
   * start + len)}; {@code localSrc} and {@code localDst} as the launch got them), planned on a
   * miss.
   */
  ChannelPlan plan(
      int c, CollectiveCall call, int used, long localSrc, long localDst, long start, long len) {
    int elemSize = call.dtype().size();
    ChannelPlan p = plans[c];
    if (p != null
        && kinds[c] == call.kind()
        && roots[c] == call.root()
        && counts[c] == call.count()
        && elemSizes[c] == elemSize
        && useds[c] == used
        && localSrcs[c] == localSrc
        && localDsts[c] == localDst) {
      return p;
    }
    p = planAnew(c, call, localSrc, localDst, start, len);
    plans[c] = p;
    kinds[c] = call.kind();
    roots[c] = call.root();
    counts[c] = call.count();
    elemSizes[c] = elemSize;
    useds[c] = used;
    localSrcs[c] = localSrc;
    localDsts[c] = localDst;
    return p;
  }

  /**
   * Channel {@code c}'s ring plan for elements {@code [start, start + len)}: an allGather's source
   * block starts at {@code localSrc} in place, a reduceScatter's result at {@code localDst}.
   */
  private ChannelPlan planAnew(
      int c, CollectiveCall call, long localSrc, long localDst, long start, long len) {
    int size = call.dtype().size();
    return switch (call.kind()) {
      case ALL_REDUCE -> RingAllReduce.plan(c, rank, nRanks, start, len, size, stepSize);
      case BROADCAST ->
          RingChain.broadcast(c, rank, nRanks, call.root(), start, len, size, stepSize);
      case REDUCE -> RingChain.reduce(c, rank, nRanks, call.root(), start, len, size, stepSize);
      case ALL_GATHER ->
          RingGather.allGather(c, rank, nRanks, call.count(), start, len, localSrc, size, stepSize);
      case REDUCE_SCATTER ->
          RingGather.reduceScatter(
              c, rank, nRanks, call.count(), start, len, localDst, size, stepSize);
      case SEND_RECV -> throw new IllegalStateException("send/recv has no ring plan");
    };
  }
}
