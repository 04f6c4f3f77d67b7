package org.sparkccl.algorithm;

import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.config.Algorithm;

/**
 * Picks ring or tree for a collective from a latency/bandwidth model, as NCCL's tuner does: a hop
 * costs {@code hopLatencyUs}, a byte over one link {@code 1 / linkGBps}. The constants come from
 * configuration; {@code bin/sparkccl-calibrate} measures them on a machine (docs/benchmarks.md has
 * the figures behind the defaults).
 *
 * <ul>
 *   <li>ring allReduce: {@code 2(n-1)} hops, {@code 2(n-1)/n} of the bytes per link;
 *   <li>tree allReduce: {@code 2 floor(log2 n)} hops, each interior rank sends every byte to two
 *       children and its parent: about {@code 2x} the bytes per link;
 *   <li>ring broadcast/reduce: a chain of {@code n-1} hops, every byte once per link;
 *   <li>tree broadcast/reduce: {@code floor(log2 n)} hops, every byte twice (two children).
 * </ul>
 */
public final class Tuner {
  private final double hopUs;
  private final double treeHopUs;
  private final double usPerByte;
  private final Algorithm forced;

  /**
   * @param treeHopLatencyUs a tree hop costs more than a ring hop here (an interior rank serves
   *     three links from one kernel), so it has its own measured constant
   * @param forced {@code AUTO} lets the model choose
   */
  public Tuner(double hopLatencyUs, double treeHopLatencyUs, double linkGBps, Algorithm forced) {
    this.hopUs = hopLatencyUs;
    this.treeHopUs = treeHopLatencyUs;
    this.usPerByte = 1e-3 / linkGBps;
    this.forced = forced;
  }

  /** Whether {@code kind} has a tree version. */
  public static boolean hasTree(CollectiveCall.Kind kind) {
    return kind == CollectiveCall.Kind.ALL_REDUCE
        || kind == CollectiveCall.Kind.BROADCAST
        || kind == CollectiveCall.Kind.REDUCE;
  }

  /** {@code RING} or {@code TREE}, never {@code AUTO}. */
  public Algorithm choose(CollectiveCall.Kind kind, long bytes, int nRanks) {
    if (!hasTree(kind) || nRanks < 3 || forced == Algorithm.RING) {
      return Algorithm.RING;
    }
    if (forced == Algorithm.TREE) {
      return Algorithm.TREE;
    }
    return predictUs(kind, Algorithm.TREE, bytes, nRanks)
            < predictUs(kind, Algorithm.RING, bytes, nRanks)
        ? Algorithm.TREE
        : Algorithm.RING;
  }

  /** The model's time for one call, in microseconds. */
  public double predictUs(CollectiveCall.Kind kind, Algorithm algo, long bytes, int nRanks) {
    int depth = Tree.depth(nRanks);
    boolean allReduce = kind == CollectiveCall.Kind.ALL_REDUCE;
    if (algo == Algorithm.RING) {
      return allReduce
          ? 2.0 * (nRanks - 1) * hopUs + 2.0 * (nRanks - 1) / nRanks * bytes * usPerByte
          : (nRanks - 1) * hopUs + bytes * usPerByte;
    }
    return allReduce
        ? 2.0 * depth * treeHopUs + 2.0 * bytes * usPerByte
        : depth * treeHopUs + 2.0 * bytes * usPerByte;
  }
}
