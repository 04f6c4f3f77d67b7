package org.sparkccl.algorithm;

import org.sparkccl.comm.CollectiveCall;
import org.sparkccl.config.Algorithm;

/**
 * Picks ring, tree, recursive doubling or Rabenseifner for a collective from a latency/bandwidth
 * model, as NCCL's tuner does: a hop costs {@code hopLatencyUs}, a byte over one link {@code 1 /
 * linkGBps}. The constants come from configuration; {@code bin/sparkccl-calibrate} measures them on
 * a machine (docs/benchmarks.md has the figures behind the defaults).
 *
 * <ul>
 *   <li>ring allReduce: {@code 2(n-1)} hops, {@code 2(n-1)/n} of the bytes per link;
 *   <li>tree allReduce: {@code 2 floor(log2 n)} hops, and {@code 2 floor(log2 n)} times the bytes
 *       per link: each level waits for the one below it to finish a slice before it forwards
 *       (measured over sockets on a 16-core host, against the ring's {@code 2(n-1)/n}: 4.0x the
 *       bytes at 4 ranks and 6.1x at 8, at 8 MiB; docs/benchmarks.md). With 2x, as one interior
 *       rank's links alone would give, the tree took 8 ranks from 32 KiB to 1 MiB and ran 2.3x
 *       slower than the ring at 512 KiB;
 *   <li>ring broadcast/reduce: a chain of {@code n-1} hops, every byte once per link;
 *   <li>tree broadcast/reduce: {@code floor(log2 n)} hops, every byte twice (two children);
 *   <li>recursive doubling allReduce: {@link RecursiveDoubling#rounds} hops (both directions of an
 *       exchange at once), and every one of them carries all the bytes, counted twice: one kernel
 *       thread copies out and reduces in every byte of every round, where the ring's kernels share
 *       the reduction (measured on 2 ranks over sockets at 64 MiB: 1.1x to 2.2x the ring's time for
 *       the same bytes per link). It runs over the same point-to-point links as the tree, so its
 *       hops cost a tree hop.
 *   <li>Rabenseifner allReduce ({@link RecursiveHalving}): {@link RecursiveHalving#hops} tree hops
 *       (halving, then doubling), and like the ring {@code 2(p-1)/p} of the bytes per link over a
 *       power-of-two core of {@code p} ranks, times {@link #RH_BYTES_OVER_RING}; a rank count that
 *       is not a power of two adds the fold in and the result out, every byte each.
 *   <li>ring reduceScatter and allGather: {@code n-1} hops, each carrying one block ({@code bytes}
 *       is a rank's block here) over every link;
 *   <li>reduceScatter by recursive halving ({@link RecursiveHalving#scatterRounds}) and allGather
 *       by recursive doubling ({@link RecursiveHalving#gatherRounds}), power-of-two rank counts:
 *       {@code log2 n} tree hops carrying {@code n/2, n/4, ..., 1} blocks (the other way round for
 *       the allGather), {@code n-1} in all, times {@link #RH_BYTES_OVER_RING}.
 * </ul>
 *
 * <p>Where two predict the same time the ring is preferred, then the tree.
 *
 * <p>Where every edge lies in shared memory ({@link #forSharedMemory}) the constants are those
 * measured there and trees are left out: a tree's interior rank serves three edges from one kernel
 * thread while a ring hop there is a copy into the next rank's slot. On a 16-core host with 4 and 8
 * rank processes the ring chain beat the tree for broadcast and reduce from 8 B to 16 KiB but once,
 * and recursive doubling, Rabenseifner or the ring beat the tree allReduce at every size
 * (docs/benchmarks.md). There the reduceScatter by halving weighs its bytes by {@link
 * #SHM_HALVING_BYTES_OVER_RING} instead.
 */
public final class Tuner {
  /**
   * Rabenseifner's time per byte over the ring's for the same bytes per link: one kernel thread
   * sends and reduces every byte, where the ring's sends and reductions overlap along the ring.
   * Measured on a 2-core VM, 4 ranks over sockets, same run: 0.93x at 2 MiB, 1.05x at 16 MiB, 1.16x
   * at 64 MiB (docs/benchmarks.md); above 1, so that the ring keeps the largest messages.
   */
  static final double RH_BYTES_OVER_RING = 1.15;

  /**
   * The halving reduceScatter's time per byte over the ring's where every edge lies in shared
   * memory: one kernel thread per rank reduces every block it receives, where a ring hop there is a
   * copy into the next rank's slot with the reductions spread along the ring. Fitted on a 16-core
   * host, 8 rank processes, 64 KiB input: 35-47 us against the ring's 26-33 (docs/benchmarks.md);
   * with it halving keeps the inputs below 16 KiB at 8 ranks, where it won (8 KiB: 10.2 against
   * 14.4 us), and none at 4 ranks, where it never won.
   */
  static final double SHM_HALVING_BYTES_OVER_RING = 1.9;

  /**
   * The ring's time per byte, over what the constants give, where its connections move steps of
   * {@link ChannelPlan#IN_PLACE_MIN_BYTES} or more in place (sockets: no copy into the send slot or
   * out of the receive slot) and every rank spins. Measured on a 16-core host, 8 rank processes
   * over sockets, against the ring that copied, same run (medians, docs/benchmarks.md): allGather
   * 0.71-0.75 of its time per call from 512 KiB to 8 MiB, allReduce 0.88-0.96 (its reductions
   * remain; allReduce has {@link #RING_IN_PLACE_ALL_REDUCE_BYTES}). With it the ring takes the 512
   * KiB allGather at 8 ranks back from doubling (the forced ring 260-267 us in one run, {@code
   * auto}'s doubling 465 in the next, that hour), which keeps 128 KiB, where the ring's steps of 16
   * KiB still copy (147 against 232-245 us).
   */
  static final double RING_IN_PLACE_BYTES = 0.75;

  /**
   * {@link #RING_IN_PLACE_BYTES} for allReduce, whose reduce-scatter half still reduces through
   * slots: the middle of the 0.88-0.96 measured with it. With 0.75 the ring took the 512 KiB
   * allReduce at 8 ranks from Rabenseifner, which later runs on the same host over sockets did not
   * bear out: Rabenseifner forced ran 345 and 357 us there against the ring's 453 and 475, two runs
   * (docs/benchmarks.md). With this alone the ring keeps 1 MiB and up at 8 ranks ({@link
   * #RH_ONE_SLOT_BYTES_OVER_RING} gives 1 MiB to Rabenseifner), and 4 ranks choose as before.
   */
  static final double RING_IN_PLACE_ALL_REDUCE_BYTES = 0.92;

  /**
   * {@link #RH_BYTES_OVER_RING} for a Rabenseifner allReduce whose first exchange (half the bytes)
   * fits one FIFO slot, beside a socket ring that moves in place ({@link #withOneSlotHalving}):
   * every exchange is then one step each way. On a 16-core host, 8 rank processes over sockets,
   * with the JIT warmed (1,000 calls a size before the timed ones), medians of three rounds:
   * Rabenseifner ran 0.78 of the ring's time at 512 KiB and 0.84 at 1 MiB, and 1.03-1.08 from 2 MiB
   * to 8 MiB, where its first exchange spans two slots of the default 512 KiB; the tuner with this
   * took 0.83 of the time of the tuner without it at 1 MiB (four rounds of four) and the same at 2
   * MiB (docs/benchmarks.md). Above 1.01, where 4 ranks would take 256 KiB from the ring (not
   * measured with the JIT warmed); below 1.05, where 8 ranks would leave 1 MiB to the ring. At 8
   * ranks it also gives 32 KiB to Rabenseifner instead of recursive doubling, by a hair of the
   * model's; the two measured alike there (81.4 against 81.0 us, three rounds).
   */
  static final double RH_ONE_SLOT_BYTES_OVER_RING = 1.03;

  private final double hopUs;
  private final double treeHopUs;
  private final double linkGBps;
  private final double usPerByte;
  private final Algorithm forced;

  /** Every edge lies in shared memory: no trees, and a costlier halving reduceScatter. */
  private final boolean sharedMemory;

  /** The ring moves large steps in place: {@link #RING_IN_PLACE_BYTES} on their bytes. */
  private final boolean ringInPlace;

  /**
   * Bytes of a FIFO slot where a Rabenseifner allReduce whose first exchange fits one costs {@link
   * #RH_ONE_SLOT_BYTES_OVER_RING} a byte; 0 where that is not modelled.
   */
  private final long halvingSlotBytes;

  /**
   * @param treeHopLatencyUs a tree hop costs more than a ring hop here (an interior rank serves
   *     three links from one kernel), so it has its own measured constant
   * @param forced {@code AUTO} lets the model choose
   */
  public Tuner(double hopLatencyUs, double treeHopLatencyUs, double linkGBps, Algorithm forced) {
    this(hopLatencyUs, treeHopLatencyUs, linkGBps, forced, false, false, 0);
  }

  private Tuner(
      double hopLatencyUs,
      double treeHopLatencyUs,
      double linkGBps,
      Algorithm forced,
      boolean sharedMemory,
      boolean ringInPlace,
      long halvingSlotBytes) {
    this.hopUs = hopLatencyUs;
    this.treeHopUs = treeHopLatencyUs;
    this.linkGBps = linkGBps;
    this.usPerByte = 1e-3 / linkGBps;
    this.forced = forced;
    this.sharedMemory = sharedMemory;
    this.ringInPlace = ringInPlace;
    this.halvingSlotBytes = halvingSlotBytes;
  }

  /**
   * The tuner for a communicator whose every edge lies in shared memory: the constants measured
   * there, and no tree unless {@code forced}.
   */
  public static Tuner forSharedMemory(
      double hopLatencyUs, double treeHopLatencyUs, double linkGBps, Algorithm forced) {
    return new Tuner(hopLatencyUs, treeHopLatencyUs, linkGBps, forced, true, false, 0);
  }

  /**
   * This tuner for a ring whose connections move large steps in place (sockets) between ranks that
   * all spin: the ring's bytes of such steps cost {@link #RING_IN_PLACE_BYTES} of the rest.
   */
  public Tuner withRingInPlace() {
    return new Tuner(hopUs, treeHopUs, linkGBps, forced, sharedMemory, true, halvingSlotBytes);
  }

  /**
   * This tuner where FIFO slots hold {@code slotBytes}: a Rabenseifner allReduce whose first
   * exchange fits one slot costs {@link #RH_ONE_SLOT_BYTES_OVER_RING} of the ring's time per byte.
   */
  public Tuner withOneSlotHalving(long slotBytes) {
    return new Tuner(hopUs, treeHopUs, linkGBps, forced, sharedMemory, ringInPlace, slotBytes);
  }

  /** The model's constants, for a log line. */
  public String constants() {
    return "hop "
        + hopUs
        + " us, tree hop "
        + treeHopUs
        + " us, link "
        + linkGBps
        + " GB/s"
        + (ringInPlace
            ? ", ring in place x"
                + RING_IN_PLACE_BYTES
                + " (allReduce x"
                + RING_IN_PLACE_ALL_REDUCE_BYTES
                + ")"
            : "")
        + (halvingSlotBytes > 0
            ? ", Rabenseifner in one slot of "
                + halvingSlotBytes
                + " B x"
                + RH_ONE_SLOT_BYTES_OVER_RING
            : "");
  }

  /** Whether {@code kind} has a tree version. */
  public static boolean hasTree(CollectiveCall.Kind kind) {
    return kind == CollectiveCall.Kind.ALL_REDUCE
        || kind == CollectiveCall.Kind.BROADCAST
        || kind == CollectiveCall.Kind.REDUCE;
  }

  /**
   * Whether {@code kind} on {@code nRanks} ranks has a recursive doubling version: allReduce (any
   * rank count) and allGather (power-of-two rank counts).
   */
  public static boolean hasDoubling(CollectiveCall.Kind kind, int nRanks) {
    return kind == CollectiveCall.Kind.ALL_REDUCE
        || (kind == CollectiveCall.Kind.ALL_GATHER && RecursiveHalving.isPowerOfTwo(nRanks));
  }

  /**
   * Whether {@code kind} on {@code nRanks} ranks has a recursive halving version: allReduce
   * (Rabenseifner's, any rank count) and reduceScatter (power-of-two rank counts).
   */
  public static boolean hasHalving(CollectiveCall.Kind kind, int nRanks) {
    return kind == CollectiveCall.Kind.ALL_REDUCE
        || (kind == CollectiveCall.Kind.REDUCE_SCATTER && RecursiveHalving.isPowerOfTwo(nRanks));
  }

  /** Whether {@code algo} can run {@code kind} on {@code nRanks} ranks. */
  public static boolean applies(Algorithm algo, CollectiveCall.Kind kind, int nRanks) {
    return switch (algo) {
      case RING -> true;
      case TREE -> hasTree(kind) && nRanks >= 3;
      case RD -> hasDoubling(kind, nRanks) && nRanks >= 2;
      case RH -> hasHalving(kind, nRanks) && nRanks >= 2;
      case AUTO -> false;
    };
  }

  /** What the model weighs against the ring, in order of preference on a tie. */
  private static final Algorithm[] CANDIDATES = {Algorithm.TREE, Algorithm.RD, Algorithm.RH};

  /** A concrete algorithm, never {@code AUTO}; a forced one that does not apply runs as a ring. */
  public Algorithm choose(CollectiveCall.Kind kind, long bytes, int nRanks) {
    if (forced != Algorithm.AUTO) {
      return applies(forced, kind, nRanks) ? forced : Algorithm.RING;
    }
    Algorithm best = Algorithm.RING;
    double bestUs = predictUs(kind, best, bytes, nRanks);
    for (Algorithm a : CANDIDATES) {
      if ((!sharedMemory || a != Algorithm.TREE) && applies(a, kind, nRanks)) {
        double us = predictUs(kind, a, bytes, nRanks);
        if (us < bestUs) {
          best = a;
          bestUs = us;
        }
      }
    }
    return best;
  }

  /**
   * The factor on the ring's bytes: {@link #RING_IN_PLACE_BYTES} ({@link
   * #RING_IN_PLACE_ALL_REDUCE_BYTES} for allReduce) where its steps (of {@code stepBytes}: a rank's
   * share of an allReduce, a block of an allGather, a broadcast's bytes) move in place and their
   * bytes pass unchanged (allReduce's gather half, allGather, broadcast), else 1. A reduceScatter's
   * and a reduce's steps are reduced into slots, so they keep theirs.
   */
  private double ringBytes(CollectiveCall.Kind kind, double stepBytes) {
    boolean unchanged =
        kind == CollectiveCall.Kind.ALL_REDUCE
            || kind == CollectiveCall.Kind.ALL_GATHER
            || kind == CollectiveCall.Kind.BROADCAST;
    if (!ringInPlace || !unchanged || stepBytes < ChannelPlan.IN_PLACE_MIN_BYTES) {
      return 1.0;
    }
    return kind == CollectiveCall.Kind.ALL_REDUCE
        ? RING_IN_PLACE_ALL_REDUCE_BYTES
        : RING_IN_PLACE_BYTES;
  }

  /** The model's time for one call, in microseconds. */
  public double predictUs(CollectiveCall.Kind kind, Algorithm algo, long bytes, int nRanks) {
    int depth = Tree.depth(nRanks);
    boolean allReduce = kind == CollectiveCall.Kind.ALL_REDUCE;
    if (kind == CollectiveCall.Kind.REDUCE_SCATTER || kind == CollectiveCall.Kind.ALL_GATHER) {
      double perBlock = (nRanks - 1) * bytes * usPerByte;
      double overRing =
          sharedMemory && kind == CollectiveCall.Kind.REDUCE_SCATTER
              ? SHM_HALVING_BYTES_OVER_RING
              : RH_BYTES_OVER_RING;
      return algo == Algorithm.RING
          ? (nRanks - 1) * hopUs + perBlock * ringBytes(kind, (double) bytes)
          : Integer.numberOfTrailingZeros(nRanks) * treeHopUs + perBlock * overRing;
    }
    if (algo == Algorithm.RD) {
      int rounds = RecursiveDoubling.rounds(nRanks);
      return rounds * treeHopUs + 2.0 * rounds * bytes * usPerByte;
    }
    if (algo == Algorithm.RH) {
      int core = RecursiveDoubling.core(nRanks);
      double overRing =
          halvingSlotBytes > 0 && bytes / 2 <= halvingSlotBytes
              ? RH_ONE_SLOT_BYTES_OVER_RING
              : RH_BYTES_OVER_RING;
      double perLink = 2.0 * (core - 1) / core * overRing + (core == nRanks ? 0 : 2);
      return RecursiveHalving.hops(nRanks) * treeHopUs + perLink * bytes * usPerByte;
    }
    if (algo == Algorithm.RING) {
      double ringStep = allReduce ? (double) bytes / nRanks : (double) bytes;
      return allReduce
          ? 2.0 * (nRanks - 1) * hopUs
              + 2.0 * (nRanks - 1) / nRanks * bytes * usPerByte * ringBytes(kind, ringStep)
          : (nRanks - 1) * hopUs + bytes * usPerByte * ringBytes(kind, ringStep);
    }
    return allReduce
        ? 2.0 * depth * treeHopUs + 2.0 * depth * bytes * usPerByte
        : depth * treeHopUs + 2.0 * bytes * usPerByte;
  }
}
