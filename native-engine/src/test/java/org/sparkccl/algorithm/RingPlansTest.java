package org.sparkccl.algorithm;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.sparkccl.algorithm.RingSimulator.Buffers;
import org.sparkccl.algorithm.RingSimulator.Sym;

/**
 * The ring planners, checked by running every rank's plan of every channel against the others on
 * symbolic data ({@link RingSimulator}): no deadlock with FIFOs of the engine's size, every rank
 * sends exactly the slices its successor receives, every output element holds each rank's
 * contribution exactly once and went through one final reduction, and every rank ends with every
 * element it should have. Counts are uneven on purpose: smaller than the ring, not a multiple of a
 * chunk or a round, split over channels of different lengths. Rings start at 2 ranks: with one rank
 * the launcher copies instead of planning.
 */
@DisplayName("ring plans")
class RingPlansTest {
  /** Slot sizes: the smallest the configuration allows (more rounds per count), and another. */
  private static final int[] STEP_SIZES = {64, 128};

  private static final int[] ELEM_SIZES = {1, 2, 4, 8};

  /**
   * One planner setup; {@code count} is per rank, as the launcher passes it; {@code root} is used
   * by broadcast and reduce, and a reduce is in place on its root only.
   */
  record Setup(
      int nRanks, long count, int elemSize, int stepSize, int channels, boolean inPlace, int root) {
    @Override
    public String toString() {
      return nRanks
          + " ranks, count "
          + count
          + ", "
          + elemSize
          + "-byte elements, "
          + stepSize
          + "-byte slots, "
          + channels
          + " channel(s)"
          + (inPlace ? ", in place" : "");
    }
  }

  static IntStream ranks() {
    return IntStream.rangeClosed(2, 9);
  }

  /**
   * Counts around the boundaries of chunks and rounds for {@code n} ranks (a round is {@code n}
   * chunks of {@code 4 * stepSize / elemSize} elements), plus random ones, in every mix of element
   * size, slot size, channel count, in place or not and root. A fixed seed per rank count keeps a
   * failure reproducible.
   */
  static List<Setup> setups(int n) {
    SplittableRandom rnd = new SplittableRandom(0x5EED + n);
    List<Setup> out = new ArrayList<>();
    for (int elemSize : ELEM_SIZES) {
      for (int stepSize : STEP_SIZES) {
        long chunk = RingPlanner.chunkElems(stepSize, elemSize);
        long round = chunk * n;
        long[] counts = {
          1,
          n - 1,
          n + 1,
          chunk - 1,
          round - 1,
          round + 1,
          2 * round + chunk + 3,
          1 + rnd.nextLong(3 * round)
        };
        for (long count : counts) {
          if (count < 1) {
            continue;
          }
          int channels = 1 + rnd.nextInt(4);
          out.add(
              new Setup(n, count, elemSize, stepSize, channels, rnd.nextBoolean(), rnd.nextInt(n)));
        }
      }
    }
    return out;
  }

  private static void assertClean(List<String> problems, Setup s, String what) {
    assertTrue(problems.isEmpty(), what + ", " + s + ":\n  " + String.join("\n  ", problems));
  }

  /** Runs every rank's plans of setup {@code s} against each other (see {@link RingSimulator}). */
  private static List<String> simulate(
      Setup s, int n, int count, RingSimulator.Planner planner, Buffers[] b) {
    return RingSimulator.run(n, s.channels(), count, s.elemSize(), s.stepSize(), planner, b);
  }

  @ParameterizedTest(name = "{0} ranks")
  @MethodSource("ranks")
  @DisplayName("allReduce: every rank ends with every element reduced once over every rank")
  void allReduce(int n) {
    for (Setup s : setups(n)) {
      int count = Math.toIntExact(s.count());
      Buffers[] b = new Buffers[n];
      for (int r = 0; r < n; r++) {
        Sym[] src = new Sym[count];
        for (int i = 0; i < count; i++) {
          src[i] = Sym.input(i, r);
        }
        b[r] = new Buffers(src, s.inPlace() ? src : new Sym[count]);
      }
      List<String> problems =
          simulate(
              s,
              n,
              count,
              (c, rank, start, len) ->
                  RingAllReduce.plan(c, rank, n, start, len, s.elemSize(), s.stepSize()),
              b);
      for (int r = 0; r < n && problems.isEmpty(); r++) {
        expect(problems, r, b[r].dst, 0, count, i -> Sym.reduced(i, n));
      }
      assertClean(problems, s, "allReduce");
    }
  }

  @ParameterizedTest(name = "{0} ranks")
  @MethodSource("ranks")
  @DisplayName("reduceScatter: rank r ends with block r reduced once over every rank")
  void reduceScatter(int n) {
    for (Setup s : setups(n)) {
      int count = Math.toIntExact(s.count());
      Buffers[] b = new Buffers[n];
      long[] dstBase = new long[n];
      for (int r = 0; r < n; r++) {
        Sym[] src = new Sym[n * count];
        for (int i = 0; i < n * count; i++) {
          src[i] = Sym.input(i, r);
        }
        dstBase[r] = s.inPlace() ? (long) r * count : 0;
        b[r] = new Buffers(src, s.inPlace() ? src : new Sym[count]);
      }
      List<String> problems =
          simulate(
              s,
              n,
              count,
              (c, rank, start, len) ->
                  RingGather.reduceScatter(
                      c, rank, n, count, start, len, dstBase[rank], s.elemSize(), s.stepSize()),
              b);
      for (int r = 0; r < n && problems.isEmpty(); r++) {
        long block = (long) r * count;
        expect(problems, r, b[r].dst, dstBase[r], count, i -> Sym.reduced(block + i, n));
      }
      assertClean(problems, s, "reduceScatter");
    }
  }

  @ParameterizedTest(name = "{0} ranks")
  @MethodSource("ranks")
  @DisplayName("allGather: every rank ends with every rank's block, unreduced, in rank order")
  void allGather(int n) {
    for (Setup s : setups(n)) {
      int count = Math.toIntExact(s.count());
      Buffers[] b = new Buffers[n];
      long[] srcBase = new long[n];
      for (int r = 0; r < n; r++) {
        Sym[] dst = new Sym[n * count];
        Sym[] src = s.inPlace() ? dst : new Sym[count];
        srcBase[r] = s.inPlace() ? (long) r * count : 0;
        for (int i = 0; i < count; i++) {
          src[Math.toIntExact(srcBase[r] + i)] = Sym.input((long) r * count + i, r);
        }
        b[r] = new Buffers(src, dst);
      }
      List<String> problems =
          simulate(
              s,
              n,
              count,
              (c, rank, start, len) ->
                  RingGather.allGather(
                      c, rank, n, count, start, len, srcBase[rank], s.elemSize(), s.stepSize()),
              b);
      for (int r = 0; r < n && problems.isEmpty(); r++) {
        expect(problems, r, b[r].dst, 0, (long) n * count, i -> Sym.input(i, (int) (i / count)));
      }
      assertClean(problems, s, "allGather");
    }
  }

  @ParameterizedTest(name = "{0} ranks")
  @MethodSource("ranks")
  @DisplayName("broadcast: every rank ends with the root's elements; others' are never read")
  void broadcast(int n) {
    for (Setup s : setups(n)) {
      int count = Math.toIntExact(s.count());
      int root = s.root();
      Buffers[] b = new Buffers[n];
      for (int r = 0; r < n; r++) {
        // as the communicator passes them: only the root has a source of its own
        Sym[] dst = new Sym[count];
        Sym[] src = r == root && !s.inPlace() ? new Sym[count] : dst;
        if (r == root) {
          for (int i = 0; i < count; i++) {
            src[i] = Sym.input(i, root);
          }
        }
        b[r] = new Buffers(src, dst);
      }
      List<String> problems =
          simulate(
              s,
              n,
              count,
              (c, rank, start, len) ->
                  RingChain.broadcast(c, rank, n, root, start, len, s.elemSize(), s.stepSize()),
              b);
      for (int r = 0; r < n && problems.isEmpty(); r++) {
        expect(problems, r, b[r].dst, 0, count, i -> Sym.input(i, root));
      }
      assertClean(problems, s, "broadcast from root " + root);
    }
  }

  @ParameterizedTest(name = "{0} ranks")
  @MethodSource("ranks")
  @DisplayName("reduce: the root ends with every element reduced once; no other rank writes")
  void reduce(int n) {
    for (Setup s : setups(n)) {
      int count = Math.toIntExact(s.count());
      int root = s.root();
      Buffers[] b = new Buffers[n];
      for (int r = 0; r < n; r++) {
        Sym[] src = new Sym[count];
        for (int i = 0; i < count; i++) {
          src[i] = Sym.input(i, r);
        }
        b[r] = new Buffers(src, r == root && s.inPlace() ? src : new Sym[count]);
      }
      List<String> problems =
          simulate(
              s,
              n,
              count,
              (c, rank, start, len) ->
                  RingChain.reduce(c, rank, n, root, start, len, s.elemSize(), s.stepSize()),
              b);
      expect(problems, root, b[root].dst, 0, count, i -> Sym.reduced(i, n));
      for (int r = 0; r < n && problems.isEmpty(); r++) {
        Sym[] dst = b[r].dst;
        if (r != root && IntStream.range(0, count).anyMatch(i -> dst[i] != null)) {
          problems.add("rank " + r + " wrote its destination; only the root may");
        }
      }
      assertClean(problems, s, "reduce to root " + root);
    }
  }

  @FunctionalInterface
  private interface Expected {
    Sym at(long i);
  }

  /** {@code buf[base + i]} must be {@code expected(i)} for {@code i < count}. */
  private static void expect(
      List<String> problems, int rank, Sym[] buf, long base, long count, Expected expected) {
    for (long i = 0; i < count; i++) {
      Sym got = buf[Math.toIntExact(base + i)];
      Sym want = expected.at(i);
      if (!Objects.equals(got, want)) {
        problems.add(
            "rank "
                + rank
                + ": element "
                + (base + i)
                + " is "
                + (got == null ? "unwritten" : got)
                + ", expected "
                + want);
        return;
      }
    }
  }
}
