package org.sparkccl.comm;

import org.sparkccl.algorithm.ChannelPlan;

/**
 * The last ring plan of each channel, reused while the next collective has the same shape (kind,
 * root, count, element size and channels used): a training loop calls the same allReduce again and
 * again, and planning it anew built a list of primitive calls every time. Plans are immutable. Used
 * under the launch lock only.
 */
final class PlanCache {
  private final ChannelPlan[] plans;
  private final CollectiveCall.Kind[] kinds;
  private final int[] roots;
  private final long[] counts;
  private final int[] elemSizes;
  private final int[] useds;
  private final long[] localSrcs;
  private final long[] localDsts;

  PlanCache(int channels) {
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
      int c,
      CollectiveCall call,
      int used,
      long localSrc,
      long localDst,
      CollectiveLauncher.Planner planner,
      long start,
      long len) {
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
    p = planner.plan(c, start, len);
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
}
