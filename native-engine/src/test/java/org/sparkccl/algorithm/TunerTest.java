package org.sparkccl.algorithm;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
import org.sparkccl.config.CclConfig;

/**
 * The tuner's choice under random model constants: always a concrete algorithm, the forced one
 * where it applies, the ring where nothing else applies, and the cheapest by its own model, whose
 * predictions grow with the message size.
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
          // reduceScatter halves and allGather doubles over power-of-two rank counts
          boolean pow2 = n >= 2 && Integer.bitCount(n) == 1;
          boolean rdPossible =
              (kind == Kind.ALL_REDUCE && n >= 2) || (kind == Kind.ALL_GATHER && pow2);
          boolean rhPossible =
              (kind == Kind.ALL_REDUCE && n >= 2) || (kind == Kind.REDUCE_SCATTER && pow2);
          for (long bytes : sizes(rnd)) {
            Algorithm a = t.choose(kind, bytes, n);
            Supplier<String> where =
                () -> kind + ", " + bytes + " bytes, " + n + " ranks, algo=" + forced;
            assertNotEquals(Algorithm.AUTO, a, where);
            if (forced == Algorithm.RING
                || (forced == Algorithm.TREE && !treePossible)
                || (forced == Algorithm.RD && !rdPossible)
                || (forced == Algorithm.RH && !rhPossible)
                || (!treePossible && !rdPossible && !rhPossible)) {
              assertEquals(Algorithm.RING, a, where);
            } else if (forced != Algorithm.AUTO) {
              assertEquals(forced, a, where);
            } else {
              double ring = t.predictUs(kind, Algorithm.RING, bytes, n);
              double tree = treePossible ? t.predictUs(kind, Algorithm.TREE, bytes, n) : ring;
              double rd = rdPossible ? t.predictUs(kind, Algorithm.RD, bytes, n) : ring;
              double rh = rhPossible ? t.predictUs(kind, Algorithm.RH, bytes, n) : ring;
              // ties go to the earlier of ring, tree, rd, rh
              Algorithm cheapest = Algorithm.RING;
              double best = ring;
              if (tree < best) {
                cheapest = Algorithm.TREE;
                best = tree;
              }
              if (rd < best) {
                cheapest = Algorithm.RD;
                best = rd;
              }
              if (rh < best) {
                cheapest = Algorithm.RH;
              }
              assertEquals(cheapest, a, where);
            }
          }
        }
      }
    }
  }

  @Test
  @DisplayName("reduceScatter halves at power-of-two rank counts only, allReduce at any")
  void halvingExistsForAllReduceAndPowerOfTwoReduceScatters() {
    for (int n = 1; n <= 17; n++) {
      boolean pow2 = n == 1 || n == 2 || n == 4 || n == 8 || n == 16;
      for (Kind kind : Kind.values()) {
        boolean expected = kind == Kind.ALL_REDUCE || (kind == Kind.REDUCE_SCATTER && pow2);
        assertEquals(expected, Tuner.hasHalving(kind, n), kind + ", " + n + " ranks");
      }
    }
  }

  @Test
  @DisplayName("allGather doubles at power-of-two rank counts only, allReduce at any")
  void doublingExistsForAllReduceAndPowerOfTwoAllGathers() {
    for (int n = 1; n <= 17; n++) {
      boolean pow2 = n == 1 || n == 2 || n == 4 || n == 8 || n == 16;
      for (Kind kind : Kind.values()) {
        boolean expected = kind == Kind.ALL_REDUCE || (kind == Kind.ALL_GATHER && pow2);
        assertEquals(expected, Tuner.hasDoubling(kind, n), kind + ", " + n + " ranks");
      }
    }
  }

  @Test
  @DisplayName(
      "with the default constants, small allReduces on 2, 4 and 8 ranks take recursive doubling"
          + " and 64 MiB the ring")
  void defaultsPickDoublingForSmallAllReduces() {
    Tuner t = new Tuner(46, 43, 0.68, Algorithm.AUTO);
    for (int n : new int[] {2, 4, 8}) {
      assertEquals(Algorithm.RD, t.choose(Kind.ALL_REDUCE, 8, n), n + " ranks, 8 B");
      assertEquals(Algorithm.RING, t.choose(Kind.ALL_REDUCE, 64L << 20, n), n + " ranks, 64 MiB");
    }
  }

  @Test
  @DisplayName(
      "with the default constants for spinning threads, 8 ranks take recursive doubling for a 32"
          + " KiB allReduce and the ring for a 128 KiB reduce and an 8 MiB allReduce, as measured"
          + " over sockets on a 16-core host")
  void spinningDefaultsFollowTheSocketMeasurements() {
    Tuner t = spinningDefaults();
    // fastest there: rd 123 us against rh 219 and the ring 212; the ring 94 against the tree 200;
    // the ring 8627 against Rabenseifner 11092
    assertEquals(Algorithm.RD, t.choose(Kind.ALL_REDUCE, 32 << 10, 8), "allReduce 32 KiB");
    assertEquals(Algorithm.RING, t.choose(Kind.REDUCE, 128 << 10, 8), "reduce 128 KiB");
    assertEquals(Algorithm.RING, t.choose(Kind.ALL_REDUCE, 8 << 20, 8), "allReduce 8 MiB");
    // 4 ranks, 128 KiB: Rabenseifner 121 us against the ring 161
    assertEquals(Algorithm.RH, t.choose(Kind.ALL_REDUCE, 128 << 10, 4), "4 ranks, 128 KiB");
  }

  @Test
  @DisplayName(
      "a socket ring that moves large steps in place takes the 512 KiB allGather at 8 ranks from"
          + " doubling, which keeps 128 KiB, and the 1 MiB allReduce from Rabenseifner, which keeps"
          + " 512 KiB, as measured over sockets on a 16-core host")
  void aRingInPlaceTakesBackTheMidSizes() {
    Tuner copying = spinningDefaults();
    Tuner inPlace = copying.withRingInPlace();
    // allGather's bytes are a rank's block: 64 KiB of 512 KiB at 8 ranks, a ring step in place
    // (ring 260-267 us against doubling's 465); 16 KiB of 128 KiB, copied (doubling 147 against
    // 232-245)
    assertEquals(Algorithm.RD, copying.choose(Kind.ALL_GATHER, 64 << 10, 8), "copying, 512 KiB");
    assertEquals(Algorithm.RING, inPlace.choose(Kind.ALL_GATHER, 64 << 10, 8), "allGather 512K");
    assertEquals(Algorithm.RD, inPlace.choose(Kind.ALL_GATHER, 16 << 10, 8), "allGather 128K");
    // allReduce: Rabenseifner 345-357 us against the ring's 453-475 at 512 KiB (two runs),
    // 316 against 395-412 at 128 KiB; the ring 1538 against 2006 at 2 MiB
    assertEquals(Algorithm.RH, copying.choose(Kind.ALL_REDUCE, 512 << 10, 8), "copying, 512 KiB");
    assertEquals(Algorithm.RING, inPlace.choose(Kind.ALL_REDUCE, 1 << 20, 8), "allReduce 1M");
    assertEquals(Algorithm.RING, inPlace.choose(Kind.ALL_REDUCE, 2 << 20, 8), "allReduce 2M");
    assertEquals(Algorithm.RH, inPlace.choose(Kind.ALL_REDUCE, 512 << 10, 8), "allReduce 512K");
    assertEquals(Algorithm.RH, inPlace.choose(Kind.ALL_REDUCE, 128 << 10, 8), "allReduce 128K");
    // 4 ranks: the ring's steps move in place from 256 KiB, and it keeps those sizes
    for (long bytes : new long[] {256 << 10, 512 << 10, 1 << 20}) {
      assertEquals(Algorithm.RING, inPlace.choose(Kind.ALL_REDUCE, bytes, 4), "4 ranks, " + bytes);
    }
    // a reduceScatter's steps are reduced into slots: the ring gains nothing there
    assertEquals(
        copying.predictUs(Kind.REDUCE_SCATTER, Algorithm.RING, 1 << 20, 8),
        inPlace.predictUs(Kind.REDUCE_SCATTER, Algorithm.RING, 1 << 20, 8));
    assertTrue(inPlace.constants().contains("in place"), inPlace.constants());
  }

  @Test
  @DisplayName(
      "a socket ring in place with 512 KiB slots leaves the 1 MiB allReduce at 8 ranks to"
          + " Rabenseifner, whose first exchange fits one slot, and keeps 2 MiB, where it spans two,"
          + " as measured over sockets on 16-core hosts; 4 ranks choose as before")
  void rabenseifnerInOneSlotTakesOneMebibyteAtEightRanks() {
    Tuner inPlace = spinningDefaults().withRingInPlace();
    Tuner oneSlot = inPlace.withOneSlotHalving(512 << 10);
    assertEquals(Algorithm.RH, oneSlot.choose(Kind.ALL_REDUCE, 512 << 10, 8), "8 ranks, 512K");
    assertEquals(Algorithm.RH, oneSlot.choose(Kind.ALL_REDUCE, 1 << 20, 8), "8 ranks, 1M");
    assertEquals(Algorithm.RING, oneSlot.choose(Kind.ALL_REDUCE, 2 << 20, 8), "8 ranks, 2M");
    // by a hair of the model's, where doubling measured alike (81.0 against 81.4 us)
    assertEquals(Algorithm.RD, inPlace.choose(Kind.ALL_REDUCE, 32 << 10, 8), "8 ranks, 32K before");
    assertEquals(Algorithm.RH, oneSlot.choose(Kind.ALL_REDUCE, 32 << 10, 8), "8 ranks, 32K");
    assertEquals(Algorithm.RH, oneSlot.choose(Kind.ALL_REDUCE, 1 << 20, 16), "16 ranks, 1M");
    assertEquals(Algorithm.RING, oneSlot.choose(Kind.ALL_REDUCE, 2 << 20, 16), "16 ranks, 2M");
    for (int n : new int[] {2, 3, 4, 5, 6, 7}) {
      for (long bytes = 8; bytes <= 64L << 20; bytes *= 2) {
        assertEquals(
            inPlace.choose(Kind.ALL_REDUCE, bytes, n),
            oneSlot.choose(Kind.ALL_REDUCE, bytes, n),
            n + " ranks, " + bytes + " B");
      }
    }
    // smaller slots end the cheaper halving sooner
    assertEquals(
        Algorithm.RING,
        inPlace.withOneSlotHalving(256 << 10).choose(Kind.ALL_REDUCE, 1 << 20, 8),
        "8 ranks, 1M, 256 KiB slots");
    // the allGather and reduceScatter halving keep their own factor
    for (Kind kind : new Kind[] {Kind.ALL_GATHER, Kind.REDUCE_SCATTER}) {
      assertEquals(
          inPlace.predictUs(kind, Algorithm.RH, 64 << 10, 8),
          oneSlot.predictUs(kind, Algorithm.RH, 64 << 10, 8));
    }
    assertTrue(oneSlot.constants().contains("one slot"), oneSlot.constants());
  }

  @Test
  @DisplayName(
      "with the default constants, mid-size allReduces on 4 and 8 ranks take Rabenseifner, which"
          + " recursive doubling beats below and the ring at 64 MiB, and never the tree")
  void defaultsPickRabenseifnerForMidSizes() {
    Tuner t = new Tuner(46, 43, 0.68, Algorithm.AUTO);
    assertEquals(Algorithm.RD, t.choose(Kind.ALL_REDUCE, 1 << 10, 4), "4 ranks, 1 KiB");
    assertEquals(Algorithm.RH, t.choose(Kind.ALL_REDUCE, 128 << 10, 4), "4 ranks, 128 KiB");
    assertEquals(Algorithm.RING, t.choose(Kind.ALL_REDUCE, 64L << 20, 4), "4 ranks, 64 MiB");
    // 8 ranks: as many hops as the tree (2 log2 8), and a third of its bytes per link, so the
    // middle is Rabenseifner's there too (the tree took it, and ran 2.3x the ring at 512 KiB)
    assertEquals(Algorithm.RH, t.choose(Kind.ALL_REDUCE, 128 << 10, 8), "8 ranks, 128 KiB");
    for (int n : new int[] {4, 8}) {
      for (long bytes = 8; bytes <= 64L << 20; bytes *= 2) {
        assertNotEquals(
            Algorithm.TREE, t.choose(Kind.ALL_REDUCE, bytes, n), n + " ranks, " + bytes + " B");
      }
    }
    // 2 ranks: halving saves no hop over the ring, so it never wins there
    for (long bytes = 8; bytes <= 64L << 20; bytes *= 2) {
      assertNotEquals(Algorithm.RH, t.choose(Kind.ALL_REDUCE, bytes, 2), "2 ranks, " + bytes);
    }
  }

  @Test
  @DisplayName(
      "in shared memory the tuner never picks a tree unless asked, and with the default constants"
          + " picks what won on a 16-core host")
  void sharedMemoryLeavesTreesOut() {
    SplittableRandom rnd = new SplittableRandom(7);
    for (int m = 0; m < MODELS; m++) {
      double hop = Math.pow(10, rnd.nextDouble(-1, 2));
      double treeHop = Math.pow(10, rnd.nextDouble(-1, 2));
      double link = Math.pow(10, rnd.nextDouble(-1, Math.log10(400)));
      Tuner auto = Tuner.forSharedMemory(hop, treeHop, link, Algorithm.AUTO);
      Tuner tree = Tuner.forSharedMemory(hop, treeHop, link, Algorithm.TREE);
      for (int n = 3; n <= 9; n++) {
        for (long bytes : sizes(rnd)) {
          for (Kind kind : new Kind[] {Kind.ALL_REDUCE, Kind.BROADCAST, Kind.REDUCE}) {
            String where = kind + ", " + bytes + " bytes, " + n + " ranks";
            assertNotEquals(Algorithm.TREE, auto.choose(kind, bytes, n), where);
            assertEquals(Algorithm.TREE, tree.choose(kind, bytes, n), where + ", algo=tree");
          }
        }
      }
    }
    Tuner t = Tuner.forSharedMemory(1.5, 2.5, 4, Algorithm.AUTO);
    // reduceScatter and allGather: bytes are a rank's block
    for (long block = 128; block <= 16 << 10; block *= 2) {
      String where = "4 ranks, blocks of " + block;
      assertEquals(Algorithm.RING, t.choose(Kind.REDUCE_SCATTER, block, 4), where);
      assertEquals(Algorithm.RING, t.choose(Kind.ALL_GATHER, block, 4), where);
    }
    assertEquals(Algorithm.RH, t.choose(Kind.REDUCE_SCATTER, 1 << 10, 8), "8 ranks, 8 KiB in");
    assertEquals(Algorithm.RING, t.choose(Kind.REDUCE_SCATTER, 2 << 10, 8), "8 ranks, 16 KiB in");
    assertEquals(Algorithm.RING, t.choose(Kind.REDUCE_SCATTER, 8 << 10, 8), "8 ranks, 64 KiB in");
    assertEquals(Algorithm.RD, t.choose(Kind.ALL_GATHER, 8 << 10, 8), "8 ranks, 64 KiB out");
    assertEquals(Algorithm.RING, t.choose(Kind.ALL_GATHER, 16 << 10, 8), "8 ranks, 128 KiB out");
    for (int n : new int[] {4, 8}) {
      for (long bytes = 8; bytes <= 64 << 10; bytes *= 8) {
        assertEquals(Algorithm.RING, t.choose(Kind.BROADCAST, bytes, n), n + " ranks, " + bytes);
        assertEquals(Algorithm.RING, t.choose(Kind.REDUCE, bytes, n), n + " ranks, " + bytes);
      }
    }
    assertEquals(Algorithm.RD, t.choose(Kind.ALL_REDUCE, 8, 2), "2 ranks, 8 B");
    assertEquals(Algorithm.RING, t.choose(Kind.ALL_REDUCE, 32 << 10, 2), "2 ranks, 32 KiB");
    assertEquals(Algorithm.RD, t.choose(Kind.ALL_REDUCE, 512, 4), "4 ranks, 512 B");
    assertEquals(Algorithm.RING, t.choose(Kind.ALL_REDUCE, 32 << 10, 4), "4 ranks, 32 KiB");
    assertEquals(Algorithm.RD, t.choose(Kind.ALL_REDUCE, 128, 8), "8 ranks, 128 B");
    assertEquals(Algorithm.RH, t.choose(Kind.ALL_REDUCE, 8 << 10, 8), "8 ranks, 8 KiB");
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
      "predictions are positive, grow with the size, and under AUTO the choice only moves towards"
          + " algorithms that load a link with fewer bytes")
  void predictionsGrowWithSize(int n) {
    SplittableRandom rnd = new SplittableRandom(100 + n);
    for (int m = 0; m < MODELS; m++) {
      Tuner t = model(rnd, Algorithm.AUTO);
      long[] sizes = sizes(rnd);
      for (Kind kind : Kind.values()) {
        for (Algorithm algo :
            new Algorithm[] {Algorithm.RING, Algorithm.TREE, Algorithm.RD, Algorithm.RH}) {
          if ((algo == Algorithm.TREE && (!Tuner.hasTree(kind) || n < 2))
              || (algo == Algorithm.RD && !Tuner.hasDoubling(kind, n))
              || (algo == Algorithm.RH && !Tuner.hasHalving(kind, n))) {
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
        // each model is a line in the size: as the size grows the choice can only move to a
        // smaller slope (bytes per link), and past some size the ring's, the smallest, wins
        double lastSlope = Double.POSITIVE_INFINITY;
        for (long bytes : sizes) {
          Algorithm a = t.choose(kind, bytes, n);
          double slope = slope(t, kind, a, n);
          double before = lastSlope;
          assertTrue(
              slope <= before * (1 + 1e-9),
              () ->
                  kind
                      + ", "
                      + n
                      + " ranks: "
                      + a
                      + " at "
                      + bytes
                      + " bytes after a cheaper"
                      + " slope "
                      + before);
          lastSlope = slope;
        }
        assertEquals(Algorithm.RING, t.choose(kind, 1L << 50, n), kind + " at a petabyte");
      }
    }
  }

  private static double slope(Tuner t, Kind kind, Algorithm a, int n) {
    long big = 1L << 40;
    return (t.predictUs(kind, a, 2 * big, n) - t.predictUs(kind, a, big, n)) / big;
  }

  /** The tuner with the default constants for spinning ranks, choosing freely. */
  private static Tuner spinningDefaults() {
    CclConfig c = CclConfig.builder().build();
    return new Tuner(
        c.spinHopLatencyUs(), c.spinTreeHopLatencyUs(), c.spinLinkGBps(), Algorithm.AUTO);
  }
}
