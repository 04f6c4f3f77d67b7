package org.sparkccl.algorithm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The recursive doubling plan, run symbolically: every rank holds an expression of the ranks'
 * inputs, and each exchange combines two of them as {@code (lower higher)}, the order the kernel
 * reduces in. Every rank must end with the same expression over every input once.
 */
@DisplayName("recursive doubling plan")
class RecursiveDoublingTest {
  @ParameterizedTest(name = "{0} ranks")
  @ValueSource(ints = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16, 31, 33})
  void everyRankEndsWithTheSameReductionOfEveryInput(int n) {
    RecursiveDoubling[] plans = new RecursiveDoubling[n];
    String[] value = new String[n];
    for (int r = 0; r < n; r++) {
      plans[r] = new RecursiveDoubling(r, n);
      value[r] = Integer.toString(r);
    }
    int core = RecursiveDoubling.core(n);
    assertTrue(core <= n && 2 * core > n && Integer.bitCount(core) == 1, "core " + core);
    List<Integer> inCore = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      int into = plans[r].foldsInto();
      int from = plans[r].foldedFrom();
      assertTrue(into < 0 || from < 0, "rank " + r + " both folds and is folded into");
      if (into >= 0) {
        assertEquals(r, plans[into].foldedFrom(), "rank " + r + " folds into " + into);
        assertEquals(0, plans[r].partners().length);
        value[into] = "(" + value[r] + " " + value[into] + ")";
      } else {
        inCore.add(r);
      }
    }
    assertEquals(core, inCore.size());
    int rounds = Integer.numberOfTrailingZeros(core);
    for (int k = 0; k < rounds; k++) {
      String[] next = value.clone();
      for (int r : inCore) {
        int p = plans[r].partners()[k];
        assertEquals(rounds, plans[r].partners().length);
        assertEquals(r, plans[p].partners()[k], "round " + k + ": " + r + " and " + p);
        next[r] =
            p < r ? "(" + value[p] + " " + value[r] + ")" : "(" + value[r] + " " + value[p] + ")";
      }
      value = next;
    }
    for (int r = 0; r < n; r++) {
      int from = plans[r].foldedFrom();
      if (from >= 0) {
        value[from] = value[r];
      }
    }
    for (int r = 0; r < n; r++) {
      assertEquals(value[0], value[r], "rank " + r + " differs from rank 0");
    }
    String leaves = value[0].replaceAll("[()]", " ").trim();
    List<String> got = new ArrayList<>(List.of(leaves.split("\\s+")));
    got.sort((a, b) -> Integer.parseInt(a) - Integer.parseInt(b));
    List<String> want = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      want.add(Integer.toString(r));
    }
    assertEquals(want, got, "every input exactly once: " + value[0]);
    int expectedRounds = rounds + (core == n ? 0 : 2);
    assertEquals(expectedRounds, RecursiveDoubling.rounds(n));
  }
}
