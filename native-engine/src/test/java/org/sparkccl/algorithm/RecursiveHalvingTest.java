package org.sparkccl.algorithm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The Rabenseifner plan, checked element by element: partners agree on what each hands the other,
 * and after the halving rounds the core ranks' final blocks cover every element exactly once.
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

  @ParameterizedTest(name = "{0} ranks")
  @ValueSource(ints = {1, 2, 3, 4, 5, 8, 9})
  void hopsAreTwiceTheDoublingRoundsOfTheCore(int n) {
    int core = RecursiveDoubling.core(n);
    int log = Integer.numberOfTrailingZeros(core);
    assertEquals(2 * log + (core == n ? 0 : 2), RecursiveHalving.hops(n));
  }
}
