package org.sparkccl.algorithm;

/**
 * Rabenseifner's allReduce over {@code nRanks} ranks: a reduce-scatter by recursive halving, then
 * an allGather by recursive doubling, on the partners and fold of {@link RecursiveDoubling}. In
 * halving round {@code k} a core rank and its partner share one element range; the lower rank keeps
 * the lower half, the higher rank the upper half, and each hands the other half over to be reduced.
 * After the last round each core rank holds one block of the result; the allGather rounds run the
 * same exchanges backwards, each rank sending what it holds and taking what the partner holds. A
 * range of {@code len} elements splits at {@code len / 2}, so any count works, even one below the
 * rank count (some halves are then empty).
 *
 * <p>Example, 4 ranks, 10 elements, rank 1: round 0 with rank 0 keeps {@code [5, 10)} and hands
 * over {@code [0, 5)}; round 1 with rank 3 keeps {@code [5, 7)} and hands over {@code [7, 10)}.
 */
public record RecursiveHalving(RecursiveDoubling rd) {

  /**
   * One halving round with {@code partner}: this rank keeps and reduces elements {@code [keepFrom,
   * keepTo)} and hands {@code [giveFrom, giveTo)} over. Its allGather round sends the kept range
   * (complete by then) and receives the given one.
   */
  public record Round(int partner, long keepFrom, long keepTo, long giveFrom, long giveTo) {
    public long keepCount() {
      return keepTo - keepFrom;
    }

    public long giveCount() {
      return giveTo - giveFrom;
    }
  }

  /** The halving rounds of a core rank over {@code count} elements, in order; empty if it folds. */
  public Round[] rounds(long count) {
    if (count < 0) {
      throw new IllegalArgumentException("count=" + count + ", expected >= 0");
    }
    int[] partners = rd.partners();
    Round[] rounds = new Round[partners.length];
    long from = 0;
    long to = count;
    for (int k = 0; k < partners.length; k++) {
      long mid = from + (to - from) / 2;
      boolean lower = rd.rank() < partners[k];
      rounds[k] =
          lower
              ? new Round(partners[k], from, mid, mid, to)
              : new Round(partners[k], mid, to, from, mid);
      from = rounds[k].keepFrom();
      to = rounds[k].keepTo();
    }
    return rounds;
  }

  /**
   * The rounds of a reduceScatter by recursive halving over a power-of-two rank count, {@code
   * blockCount} elements per rank: partners from the farthest (the highest bit of the rank) to the
   * nearest, each round splitting the blocks still in play at a block boundary, so that after the
   * last round this rank keeps exactly its own block {@code [rank * blockCount, (rank + 1) *
   * blockCount)}. ({@link #rounds} goes the other way, nearest first, and leaves rank {@code r}
   * with the block of {@code r}'s bits reversed, which an allReduce does not mind.)
   *
   * <p>Example, 4 ranks, rank 1: round 0 with rank 3 keeps blocks {@code [0, 2)} and hands over
   * {@code [2, 4)}; round 1 with rank 0 keeps block 1 and hands over block 0.
   */
  public Round[] scatterRounds(long blockCount) {
    if (blockCount < 0) {
      throw new IllegalArgumentException("blockCount=" + blockCount + ", expected >= 0");
    }
    if (!isPowerOfTwo(rd.nRanks())) {
      throw new IllegalArgumentException(
          "a reduceScatter by halving or an allGather by doubling needs a power-of-two rank"
              + " count, got "
              + rd.nRanks());
    }
    int[] partners = rd.partners();
    Round[] rounds = new Round[partners.length];
    long from = 0;
    long to = rd.nRanks();
    for (int k = 0; k < partners.length; k++) {
      int partner = partners[partners.length - 1 - k];
      long mid = from + (to - from) / 2;
      boolean lower = rd.rank() < partner;
      long keepFrom = lower ? from : mid;
      long keepTo = lower ? mid : to;
      long giveFrom = lower ? mid : from;
      long giveTo = lower ? to : mid;
      rounds[k] =
          new Round(
              partner,
              keepFrom * blockCount,
              keepTo * blockCount,
              giveFrom * blockCount,
              giveTo * blockCount);
      from = keepFrom;
      to = keepTo;
    }
    return rounds;
  }

  /**
   * The rounds of an allGather by recursive doubling over a power-of-two rank count, {@code
   * blockCount} elements per rank: {@link #scatterRounds} backwards, nearest partner first. In each
   * this rank sends the blocks it holds ({@code [keepFrom, keepTo)}, its own block in the first
   * round) and receives the partner's ({@code [giveFrom, giveTo)}), so the blocks held double every
   * round.
   */
  public Round[] gatherRounds(long blockCount) {
    Round[] scatter = scatterRounds(blockCount);
    Round[] rounds = new Round[scatter.length];
    for (int k = 0; k < scatter.length; k++) {
      rounds[k] = scatter[scatter.length - 1 - k];
    }
    return rounds;
  }

  /**
   * Whether {@code n} ranks can run a reduceScatter by halving ({@link #scatterRounds}) or an
   * allGather by doubling ({@link #gatherRounds}).
   */
  public static boolean isPowerOfTwo(int n) {
    return n >= 1 && Integer.bitCount(n) == 1;
  }

  /**
   * Sequential transfers on the longest path: {@code log2(core)} halving and as many doubling
   * rounds, plus the fold in and the result out when {@code nRanks} is not a power of two.
   */
  public static int hops(int nRanks) {
    int core = RecursiveDoubling.core(nRanks);
    return 2 * Integer.numberOfTrailingZeros(core) + (core == nRanks ? 0 : 2);
  }
}
