package org.sparkccl.algorithm;

/**
 * Recursive doubling allReduce over {@code nRanks} ranks, as MPICH runs it: in round {@code k} each
 * rank of a power-of-two core exchanges its whole partial result with the rank whose core index
 * differs in bit {@code k}, and both reduce the pair. With {@code nRanks} not a power of two, the
 * first {@code 2 * extra} ranks pair up first: each even one hands its data to the odd one above it
 * and sits out the core rounds, then receives the result back. Core indices keep the ranks' order,
 * so the lower rank of every pair is the lower index as well.
 */
public record RecursiveDoubling(int rank, int nRanks) {
  public RecursiveDoubling {
    if (nRanks < 1 || rank < 0 || rank >= nRanks) {
      throw new IllegalArgumentException("rank " + rank + " of " + nRanks);
    }
  }

  /** Ranks in the power-of-two core: the largest power of two not above {@code nRanks}. */
  public static int core(int nRanks) {
    return Integer.highestOneBit(nRanks);
  }

  /**
   * Sequential transfers on the longest path: {@code log2(core)} exchanges, plus the fold in and
   * the result out when {@code nRanks} is not a power of two.
   */
  public static int rounds(int nRanks) {
    int core = core(nRanks);
    return Integer.numberOfTrailingZeros(core) + (core == nRanks ? 0 : 2);
  }

  private int extra() {
    return nRanks - core(nRanks);
  }

  /** The rank that hands this one its data before the core rounds, or -1. */
  public int foldedFrom() {
    return rank < 2 * extra() && rank % 2 == 1 ? rank - 1 : -1;
  }

  /** The rank this one hands its data to instead of taking part in the core rounds, or -1. */
  public int foldsInto() {
    return rank < 2 * extra() && rank % 2 == 0 ? rank + 1 : -1;
  }

  /** This rank's partner in each core round, in order; empty for a rank that folds. */
  public int[] partners() {
    if (foldsInto() >= 0) {
      return new int[0];
    }
    int core = core(nRanks);
    int index = rank < 2 * extra() ? rank / 2 : rank - extra();
    int[] partners = new int[Integer.numberOfTrailingZeros(core)];
    for (int k = 0; k < partners.length; k++) {
      partners[k] = toRank(index ^ (1 << k));
    }
    return partners;
  }

  private int toRank(int index) {
    return index < extra() ? 2 * index + 1 : index + extra();
  }
}
