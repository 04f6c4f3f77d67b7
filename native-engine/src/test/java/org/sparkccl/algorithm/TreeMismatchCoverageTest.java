package org.sparkccl.algorithm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Why only the ranks that receive nothing announce a tree broadcast or reduce at launch ({@link
 * Tree#receivesNothing}): for every choice of kind and root on each rank, a model of one call shows
 * that any disagreement is revealed by a header, a stall or one of those announcements.
 *
 * <p>The model: each rank receives from the peers its own tree names (a broadcast from its parent,
 * a reduce from its children) and sends to the others it names, after its receives. A receive
 * completes when that peer sends to this rank and has completed its own receives; the receiving
 * proxy then compares the peer's call with its own. A rank whose receive never completes stalls and
 * announces its call to its ring predecessor, as a rank that receives nothing does at launch; the
 * predecessor compares. A mismatch goes unseen only if every rank completes, every compared pair
 * agrees and every announcement matches.
 */
@DisplayName("tree broadcasts and reduces: which ranks must announce")
class TreeMismatchCoverageTest {

  /** One rank's call in the model: its kind and root. */
  private record Call(boolean broadcast, int root) {}

  @ParameterizedTest(name = "{0} ranks, broadcasts and reduces of any root")
  @ValueSource(ints = {2, 3, 4, 5, 6})
  void everyMismatchIsRevealed(int n) {
    List<Call> choices = new ArrayList<>();
    for (int root = 0; root < n; root++) {
      choices.add(new Call(true, root));
      choices.add(new Call(false, root));
    }
    Call[] calls = new Call[n];
    int[] digits = new int[n];
    long mismatches = 0;
    // every assignment of a call to each rank, counted in base choices.size()
    while (true) {
      for (int r = 0; r < n; r++) {
        calls[r] = choices.get(digits[r]);
      }
      if (!allEqual(calls)) {
        mismatches++;
        assertTrue(revealed(calls, true), () -> "unseen mismatch: " + List.of(calls));
      }
      int d = 0;
      while (d < n && ++digits[d] == choices.size()) {
        digits[d++] = 0;
      }
      if (d == n) {
        break;
      }
    }
    long all = 1;
    for (int r = 0; r < n; r++) {
      all *= choices.size();
    }
    assertEquals(all - choices.size(), mismatches, "every assignment but the matching ones");
  }

  /** The model can fail: with no announcement at launch, some mismatches go unseen. */
  @ParameterizedTest(name = "{0} ranks")
  @ValueSource(ints = {3, 4})
  void withoutAnnouncementsAtLaunchSomeGoUnseen(int n) {
    Call[] calls = new Call[n];
    for (int r = 0; r < n; r++) {
      calls[r] = new Call(true, 0);
    }
    calls[n - 1] = new Call(true, n - 1); // the last rank is a leaf of root 0's tree
    assertTrue(revealed(calls, true));
    assertFalse(revealed(calls, false), "the last rank broadcasting as its own root goes unseen");
  }

  private static boolean allEqual(Call[] calls) {
    for (Call c : calls) {
      if (!c.equals(calls[0])) {
        return false;
      }
    }
    return true;
  }

  private static boolean revealed(Call[] calls, boolean announceAtLaunch) {
    int n = calls.length;
    int[][] from = new int[n][];
    int[][] to = new int[n][];
    for (int r = 0; r < n; r++) {
      Tree t = new Tree(r, n, calls[r].root());
      int[] parent = t.parent() < 0 ? new int[0] : new int[] {t.parent()};
      from[r] = calls[r].broadcast() ? parent : t.children();
      to[r] = calls[r].broadcast() ? t.children() : parent;
    }
    boolean[] done = new boolean[n];
    boolean changed = true;
    while (changed) {
      changed = false;
      for (int r = 0; r < n; r++) {
        if (!done[r] && receivesAll(r, from, to, done)) {
          done[r] = true;
          changed = true;
        }
      }
    }
    for (int r = 0; r < n; r++) {
      for (int s : from[r]) {
        if (sendsTo(s, r, to) && done[s] && !calls[r].equals(calls[s])) {
          return true; // r's proxy reads s's header
        }
      }
      boolean announces =
          !done[r]
              || (announceAtLaunch
                  && Tree.receivesNothing(calls[r].broadcast(), r, n, calls[r].root()));
      if (announces && !calls[Math.floorMod(r - 1, n)].equals(calls[r])) {
        return true; // the ring predecessor compares
      }
    }
    return false;
  }

  private static boolean receivesAll(int r, int[][] from, int[][] to, boolean[] done) {
    for (int s : from[r]) {
      if (!sendsTo(s, r, to) || !done[s]) {
        return false;
      }
    }
    return true;
  }

  private static boolean sendsTo(int s, int r, int[][] to) {
    for (int x : to[s]) {
      if (x == r) {
        return true;
      }
    }
    return false;
  }
}
