package org.sparkccl.algorithm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.stream.IntStream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The binary tree the tree collectives run on, for every root: every rank computes its own parent
 * and children alone, so the relations must agree between ranks and form one tree over all ranks.
 */
@DisplayName("tree")
class TreeTest {
  static IntStream ranks() {
    return IntStream.concat(IntStream.rangeClosed(1, 9), IntStream.of(16, 17, 33));
  }

  @ParameterizedTest(name = "{0} ranks")
  @MethodSource("ranks")
  @DisplayName("for every root, parents and children are mutual and span every rank without cycle")
  void spansAllRanks(int n) {
    for (int root = 0; root < n; root++) {
      String where = n + " ranks, root " + root + ": ";
      int[] parent = new int[n];
      int[][] children = new int[n][];
      for (int r = 0; r < n; r++) {
        Tree t = new Tree(r, n, root);
        parent[r] = t.parent();
        children[r] = t.children();
        assertEquals(r == root, t.isRoot(), where + "isRoot of rank " + r);
        assertEquals(r == root, parent[r] == -1, where + "only the root has no parent: rank " + r);
        assertTrue(children[r].length <= 2, where + "rank " + r + " has more than two children");
        assertEquals(
            children[r].length,
            Arrays.stream(children[r]).distinct().count(),
            where + "rank " + r + " lists a child twice: " + Arrays.toString(children[r]));
      }
      int[] timesChild = new int[n];
      for (int r = 0; r < n; r++) {
        if (parent[r] != -1) {
          assertTrue(parent[r] >= 0 && parent[r] < n && parent[r] != r, where + "parent of " + r);
          int self = r;
          assertTrue(
              Arrays.stream(children[parent[r]]).anyMatch(c -> c == self),
              where + "rank " + r + " names parent " + parent[r] + ", which does not list it");
        }
        for (int c : children[r]) {
          assertTrue(c >= 0 && c < n, where + "rank " + r + " has child " + c + " out of range");
          assertEquals(r, parent[c], where + "rank " + r + " lists child " + c);
          timesChild[c]++;
        }
      }
      for (int r = 0; r < n; r++) {
        assertEquals(r == root ? 0 : 1, timesChild[r], where + "times rank " + r + " is a child");
      }
      // down from the root through children: every rank once, as deep as Tree.depth says
      int[] level = new int[n];
      Arrays.fill(level, -1);
      level[root] = 0;
      ArrayDeque<Integer> todo = new ArrayDeque<>();
      todo.add(root);
      int reached = 0;
      int deepest = 0;
      while (!todo.isEmpty()) {
        int r = todo.poll();
        reached++;
        deepest = Math.max(deepest, level[r]);
        for (int c : children[r]) {
          assertEquals(-1, level[c], where + "rank " + c + " is reached twice: a cycle");
          level[c] = level[r] + 1;
          todo.add(c);
        }
      }
      assertEquals(n, reached, where + "ranks reachable from the root");
      assertEquals(Tree.depth(n), deepest, where + "deepest level");
    }
  }

  @ParameterizedTest(name = "{0} ranks")
  @MethodSource("ranks")
  @DisplayName("depth is the smallest d with 2^(d+1) > n, as a binary heap of n ranks has")
  void depthIsFloorLog2(int n) {
    int d = 0;
    while ((2L << d) <= n) {
      d++;
    }
    assertEquals(d, Tree.depth(n));
  }
}
