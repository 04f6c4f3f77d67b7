package org.sparkccl.algorithm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Rabenseifner plan, checked element by element: partners agree on what each hands the other,
 * and after the halving rounds the core ranks' final blocks cover every element exactly once. The
 * reduceScatter rounds leave every rank its own block, reduced over every rank; the allGather
 * rounds every block on every rank.
 */
@DisplayName("Rabenseifner plan")
class RecursiveHalvingTest {
  @ParameterizedTest(name = "{0} ranks")
  @ValueSource(ints = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 33})
  void partnersAgreeAndFinalBlocksCoverEveryElementOnce(int n) {
    for (long count : new long[] {0, 1, 2, 3, 7, 1003, 4096}) {
      RecursiveHalving.Round[][] rounds = new RecursiveHalving.Round[n][];
      for (int r = 0; r < n; r++) {
        rounds[r] = new RecursiveHalving(new RecursiveDoubling(r, n)).rounds(count);
      }
      int[] covered = new int[(int) count];
      for (int r = 0; r < n; r++) {
        String where = n + " ranks, count " + count + ", rank " + r;
        long from = 0;
        long to = count;
        for (int k = 0; k < rounds[r].length; k++) {
          RecursiveHalving.Round mine = rounds[r][k];
          RecursiveHalving.Round theirs = rounds[mine.partner()][k];
          assertEquals(r, theirs.partner(), where + ", round " + k);
          assertEquals(mine.giveFrom(), theirs.keepFrom(), where + ", round " + k);
          assertEquals(mine.giveTo(), theirs.keepTo(), where + ", round " + k);
          assertEquals(from, Math.min(mine.keepFrom(), mine.giveFrom()), where + ", round " + k);
          assertEquals(to, Math.max(mine.keepTo(), mine.giveTo()), where + ", round " + k);
          assertTrue(mine.keepCount() >= 0 && mine.giveCount() >= 0, where + ", round " + k);
          from = mine.keepFrom();
          to = mine.keepTo();
        }
        if (new RecursiveDoubling(r, n).foldsInto() < 0) {
          for (long e = from; e < to; e++) {
            covered[(int) e]++;
          }
        }
      }
      for (int e = 0; e < count; e++) {
        assertEquals(1, covered[e], n + " ranks, count " + count + ": element " + e);
      }
    }
  }

  /**
   * Runs the reduceScatter rounds on bit sets of contributing ranks, one per element and rank: in
   * each round a rank merges in what its partner hands over (the partner's own sets, as they stood
   * before the round). After the last round every rank's own block holds every rank's contribution.
   */
  @ParameterizedTest(name = "{0} ranks")
  @ValueSource(ints = {1, 2, 4, 8, 16})
  void scatterRoundsLeaveEveryRankItsOwnBlockFullyReduced(int n) {
    for (long blockCount : new long[] {0, 1, 3, 1000}) {
      int total = (int) (n * blockCount);
      RecursiveHalving.Round[][] rounds = new RecursiveHalving.Round[n][];
      long[][] contributors = new long[n][total];
      for (int r = 0; r < n; r++) {
        rounds[r] = new RecursiveHalving(new RecursiveDoubling(r, n)).scatterRounds(blockCount);
        assertEquals(Integer.numberOfTrailingZeros(n), rounds[r].length, "rounds of rank " + r);
        Arrays.fill(contributors[r], 1L << r);
      }
      for (int k = 0; k < Integer.numberOfTrailingZeros(n); k++) {
        long[][] before = new long[n][];
        for (int r = 0; r < n; r++) {
          before[r] = contributors[r].clone();
        }
        for (int r = 0; r < n; r++) {
          RecursiveHalving.Round mine = rounds[r][k];
          RecursiveHalving.Round theirs = rounds[mine.partner()][k];
          String where = n + " ranks, block " + blockCount + ", rank " + r + ", round " + k;
          assertEquals(r, theirs.partner(), where);
          assertEquals(mine.keepFrom(), theirs.giveFrom(), where);
          assertEquals(mine.keepTo(), theirs.giveTo(), where);
          assertEquals(mine.keepCount(), mine.giveCount(), where);
          for (long e = mine.keepFrom(); e < mine.keepTo(); e++) {
            contributors[r][(int) e] |= before[mine.partner()][(int) e];
          }
        }
      }
      long all = (1L << n) - 1;
      for (int r = 0; r < n; r++) {
        long from = n == 1 ? 0 : rounds[r][rounds[r].length - 1].keepFrom();
        long to = n == 1 ? blockCount : rounds[r][rounds[r].length - 1].keepTo();
        assertEquals(r * blockCount, from, n + " ranks: rank " + r + " keeps another block");
        assertEquals((r + 1) * blockCount, to, n + " ranks: rank " + r + " keeps another block");
        for (long e = from; e < to; e++) {
          assertEquals(all, contributors[r][(int) e], n + " ranks, rank " + r + ", element " + e);
        }
      }
    }
  }

  /**
   * Runs the allGather rounds on the set of elements each rank holds: a rank sends only elements it
   * holds (its own block in the first round), takes the partner's range, and holds every element
   * after the last round.
   */
  @ParameterizedTest(name = "{0} ranks")
  @ValueSource(ints = {1, 2, 4, 8, 16})
  void gatherRoundsSendOnlyWhatIsHeldAndEndWithEverything(int n) {
    for (long blockCount : new long[] {0, 1, 3, 1000}) {
      int total = (int) (n * blockCount);
      RecursiveHalving.Round[][] rounds = new RecursiveHalving.Round[n][];
      boolean[][] held = new boolean[n][total];
      for (int r = 0; r < n; r++) {
        rounds[r] = new RecursiveHalving(new RecursiveDoubling(r, n)).gatherRounds(blockCount);
        Arrays.fill(held[r], (int) (r * blockCount), (int) ((r + 1) * blockCount), true);
        if (n > 1) {
          assertEquals(r * blockCount, rounds[r][0].keepFrom(), "rank " + r + " sends first");
          assertEquals((r + 1) * blockCount, rounds[r][0].keepTo(), "rank " + r + " sends first");
        }
      }
      for (int k = 0; k < Integer.numberOfTrailingZeros(n); k++) {
        boolean[][] before = new boolean[n][];
        for (int r = 0; r < n; r++) {
          before[r] = held[r].clone();
        }
        for (int r = 0; r < n; r++) {
          RecursiveHalving.Round mine = rounds[r][k];
          RecursiveHalving.Round theirs = rounds[mine.partner()][k];
          String where = n + " ranks, block " + blockCount + ", rank " + r + ", round " + k;
          assertEquals(r, theirs.partner(), where);
          assertEquals(mine.giveFrom(), theirs.keepFrom(), where);
          assertEquals(mine.giveTo(), theirs.keepTo(), where);
          for (long e = mine.keepFrom(); e < mine.keepTo(); e++) {
            assertTrue(before[r][(int) e], where + ": sends element " + e + ", not held");
          }
          for (long e = mine.giveFrom(); e < mine.giveTo(); e++) {
            held[r][(int) e] = true;
          }
        }
      }
      for (int r = 0; r < n; r++) {
        for (int e = 0; e < total; e++) {
          assertTrue(held[r][e], n + " ranks, block " + blockCount + ": rank " + r + " lacks " + e);
        }
      }
    }
  }

  @ParameterizedTest(name = "{0} ranks")
  @ValueSource(ints = {3, 5, 6, 7, 12})
  void scatterRoundsRefuseOtherRankCounts(int n) {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> new RecursiveHalving(new RecursiveDoubling(0, n)).scatterRounds(4));
    assertTrue(e.getMessage().contains("power-of-two"), e.getMessage());
  }

  @ParameterizedTest(name = "{0} ranks")
  @ValueSource(ints = {1, 2, 3, 4, 5, 8, 9})
  void hopsAreTwiceTheDoublingRoundsOfTheCore(int n) {
    int core = RecursiveDoubling.core(n);
    int log = Integer.numberOfTrailingZeros(core);
    assertEquals(2 * log + (core == n ? 0 : 2), RecursiveHalving.hops(n));
  }
}
