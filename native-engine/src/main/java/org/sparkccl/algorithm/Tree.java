package org.sparkccl.algorithm;

/**
 * A binary tree over the ranks, rooted at {@code root}: rank {@code r} sits at position {@code v =
 * (r - root) mod n}, with parent {@code (v-1)/2} and children {@code 2v+1}, {@code 2v+2}. Its depth
 * is {@code floor(log2 n)}, so a small message needs {@code 2 floor(log2 n)} hops for an allReduce
 * instead of the ring's {@code 2(n-1)}.
 */
public record Tree(int rank, int nRanks, int root) {
  /** This rank's parent, or -1 at the root. */
  public int parent() {
    int v = position();
    return v == 0 ? -1 : toRank((v - 1) / 2);
  }

  /** This rank's children (0, 1 or 2 of them). */
  public int[] children() {
    int first = firstChild(position(rank, nRanks, root));
    if (first >= nRanks) {
      return new int[0];
    }
    return first + 1 < nRanks
        ? new int[] {toRank(first), toRank(first + 1)}
        : new int[] {toRank(first)};
  }

  public boolean isRoot() {
    return rank == root;
  }

  /**
   * Whether {@code rank} receives nothing in a tree broadcast ({@code broadcast}) or reduce rooted
   * at {@code root}: the broadcast's root, the reduce's leaves. Allocates nothing (it runs at every
   * launch).
   */
  public static boolean receivesNothing(boolean broadcast, int rank, int nRanks, int root) {
    return broadcast ? rank == root : firstChild(position(rank, nRanks, root)) >= nRanks;
  }

  /** Levels below the root: {@code floor(log2 n)}. */
  public static int depth(int nRanks) {
    return 31 - Integer.numberOfLeadingZeros(nRanks);
  }

  private int position() {
    return position(rank, nRanks, root);
  }

  private static int position(int rank, int nRanks, int root) {
    return Math.floorMod(rank - root, nRanks);
  }

  /** The position of the first child of {@code position}; at or past {@code nRanks}: a leaf. */
  private static int firstChild(int position) {
    return 2 * position + 1;
  }

  private int toRank(int position) {
    return (position + root) % nRanks;
  }
}
