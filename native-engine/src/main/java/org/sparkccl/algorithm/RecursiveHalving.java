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
   * Sequential transfers on the longest path: {@code log2(core)} halving and as many doubling
   * rounds, plus the fold in and the result out when {@code nRanks} is not a power of two.
   */
  public static int hops(int nRanks) {
    int core = RecursiveDoubling.core(nRanks);
    return 2 * Integer.numberOfTrailingZeros(core) + (core == nRanks ? 0 : 2);
  }
}
