package org.sparkccl.algorithm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.function.Supplier;
import java.util.stream.IntStream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.sparkccl.comm.CollectiveCall.Kind;
import org.sparkccl.config.Algorithm;

/**
 * The tuner's choice under random model constants: always a concrete algorithm, the forced one
 * where it applies, the ring where there is no tree, and the cheaper of the two by its own model,
 * whose predictions grow with the message size.
 */
@DisplayName("tuner")
class TunerTest {
  private static final int MODELS = 15;

  static IntStream ranks() {
    return IntStream.rangeClosed(1, 9);
  }

  /** Sizes from 0 to a terabyte, sorted, with the powers of two among them. */
  private static long[] sizes(SplittableRandom rnd) {
    long[] s = new long[41 + 60];
    for (int i = 0; i <= 40; i++) {
      s[i] = i == 0 ? 0 : 1L << (i - 1);
    }
    for (int i = 41; i < s.length; i++) {
      s[i] = rnd.nextLong(1L << rnd.nextInt(1, 41));
    }
    Arrays.sort(s);
    return s;
  }

  /** Hop latencies of 0.1 to 100 us and links of 0.1 to 400 GB/s, spread over decades. */
  private static Tuner model(SplittableRandom rnd, Algorithm forced) {
    return new Tuner(
        Math.pow(10, rnd.nextDouble(-1, 2)),
        Math.pow(10, rnd.nextDouble(-1, 2)),
        Math.pow(10, rnd.nextDouble(-1, Math.log10(400))),
        forced);
  }

  @ParameterizedTest(name = "{0} ranks")
  @MethodSource("ranks")
  @DisplayName("never answers AUTO, honours a forced algorithm, and uses the ring where no tree is")
  void choiceIsConcreteAndHonoursTheConfiguration(int n) {
    SplittableRandom rnd = new SplittableRandom(n);
    for (int m = 0; m < MODELS; m++) {
      for (Algorithm forced : Algorithm.values()) {
        Tuner t = model(rnd, forced);
        for (Kind kind : Kind.values()) {
          boolean treePossible = Tuner.hasTree(kind) && n >= 3;
          for (long bytes : sizes(rnd)) {
            Algorithm a = t.choose(kind, bytes, n);
            Supplier<String> where =
                () -> kind + ", " + bytes + " bytes, " + n + " ranks, algo=" + forced;
            assertNotEquals(Algorithm.AUTO, a, where);
            if (!treePossible || forced == Algorithm.RING) {
              assertEquals(Algorithm.RING, a, where);
            } else if (forced == Algorithm.TREE) {
              assertEquals(Algorithm.TREE, a, where);
            } else {
              boolean treeCheaper =
                  t.predictUs(kind, Algorithm.TREE, bytes, n)
                      < t.predictUs(kind, Algorithm.RING, bytes, n);
              assertEquals(treeCheaper ? Algorithm.TREE : Algorithm.RING, a, where);
            }
          }
        }
      }
    }
  }

  @Test
  @DisplayName("only allReduce, broadcast and reduce have a tree, the ones the tree kernel runs")
  void treesExistForTheRootedAndReducingCollectivesOnly() {
    for (Kind kind : Kind.values()) {
      boolean expected = kind == Kind.ALL_REDUCE || kind == Kind.BROADCAST || kind == Kind.REDUCE;
      assertEquals(expected, Tuner.hasTree(kind), kind.toString());
    }
  }

  @ParameterizedTest(name = "{0} ranks")
  @MethodSource("ranks")
  @DisplayName(
      "predictions are positive, grow with the size, and under AUTO the choice switches at most"
          + " once, from tree to ring")
  void predictionsGrowWithSize(int n) {
    SplittableRandom rnd = new SplittableRandom(100 + n);
    for (int m = 0; m < MODELS; m++) {
      Tuner t = model(rnd, Algorithm.AUTO);
      long[] sizes = sizes(rnd);
      for (Kind kind : Kind.values()) {
        for (Algorithm algo : new Algorithm[] {Algorithm.RING, Algorithm.TREE}) {
          if (algo == Algorithm.TREE && (!Tuner.hasTree(kind) || n < 2)) {
            continue;
          }
          double last = -1;
          for (long bytes : sizes) {
            double us = t.predictUs(kind, algo, bytes, n);
            double before = last;
            Supplier<String> where =
                () ->
                    kind + " by " + algo + ", " + bytes + " bytes, " + n + " ranks: " + us + " us";
            assertTrue(Double.isFinite(us) && us >= 0, where);
            assertTrue(us >= before, () -> where.get() + ", less than for fewer bytes: " + before);
            assertTrue(n == 1 || bytes == 0 || us > 0, where);
            last = us;
          }
        }
        // a tree moves each byte over more links than the ring, so past some size the ring wins
        boolean seenRing = false;
        for (long bytes : sizes) {
          Algorithm a = t.choose(kind, bytes, n);
          assertFalse(
              seenRing && a == Algorithm.TREE,
              () -> kind + ", " + n + " ranks: tree again at " + bytes + " bytes after the ring");
          seenRing |= a == Algorithm.RING;
        }
        assertEquals(Algorithm.RING, t.choose(kind, 1L << 50, n), kind + " at a petabyte");
      }
    }
  }
}
