package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.sparkccl.CollectiveCase.Kind;
import org.sparkccl.CollectiveCase.Spec;
import org.sparkccl.algorithm.ChannelSplit;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Key;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostDevice;
import org.sparkccl.fifo.FifoLayout;

/**
 * broadcast, reduce, allGather and reduceScatter with ranks as threads of this JVM, every data type
 * and operator, in place and out of place, against {@link Reference}. One set of communicators per
 * setup; the cases run one after the other on it.
 */
@DisplayName("broadcast, reduce, allGather, reduceScatter with ranks as threads")
class CollectivesTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final int SMALL_BUFF = 64 << 10; // 8 KiB slots

  /** One communicator setup; {@code reduced} runs a smaller dtype x op x count set. */
  record Setup(
      int ranks,
      int channels,
      int buffSize,
      int socketThreads,
      int socksPerThread,
      boolean reduced,
      String algo) {
    Setup(int ranks, int channels, int buffSize, boolean reduced) {
      this(ranks, channels, buffSize, 0, 1, reduced, "auto");
    }

    Setup(int ranks, int channels, int buffSize, boolean reduced, String algo) {
      this(ranks, channels, buffSize, 0, 1, reduced, algo);
    }

    Setup(
        int ranks,
        int channels,
        int buffSize,
        int socketThreads,
        int socksPerThread,
        boolean reduced) {
      this(ranks, channels, buffSize, socketThreads, socksPerThread, reduced, "auto");
    }

    CclConfig config() {
      return TestConfig.builder()
          .buffSize(buffSize)
          .nChannels(channels)
          .socketThreads(socketThreads)
          .socketsPerThread(socksPerThread)
          .timeout(Duration.ofSeconds(30))
          .set(Key.ALGO, algo)
          .build();
    }

    @Override
    public String toString() {
      return ranks
          + " rank(s), "
          + channels
          + " channel(s), buffSize "
          + (buffSize >> 10)
          + "K"
          + (socketThreads > 0
              ? ", socket.nThreads " + socketThreads + " x nSocksPerThread " + socksPerThread
              : "")
          + ", algo "
          + algo
          + (reduced ? " (reduced set)" : "");
    }
  }

  static Stream<Setup> setups() {
    return Stream.of(
        new Setup(1, 1, SMALL_BUFF, false),
        new Setup(1, 2, SMALL_BUFF, true),
        new Setup(2, 1, SMALL_BUFF, false),
        new Setup(2, 2, SMALL_BUFF, true),
        new Setup(3, 1, SMALL_BUFF, true),
        new Setup(3, 2, SMALL_BUFF, false),
        new Setup(4, 1, SMALL_BUFF, false),
        new Setup(4, 2, SMALL_BUFF, true),
        new Setup(5, 1, SMALL_BUFF, true),
        new Setup(5, 2, SMALL_BUFF, false),
        new Setup(3, 2, 4 << 20, true),
        // 128K slots: big enough (>= 64K) for the socket helper threads to carry data
        new Setup(3, 2, 1 << 20, 2, 2, true),
        new Setup(8, 2, SMALL_BUFF, true),
        // the algorithms forced: tree for allReduce, broadcast and reduce at every size
        new Setup(3, 1, SMALL_BUFF, false, "ring"),
        new Setup(4, 1, SMALL_BUFF, false, "tree"),
        new Setup(5, 1, SMALL_BUFF, true, "tree"),
        new Setup(8, 1, SMALL_BUFF, true, "tree"),
        // reduceScatter by recursive halving at every size (power-of-two rank counts; at 3 ranks
        // it runs as a ring); the other collectives have no halving version and run as rings
        new Setup(2, 1, SMALL_BUFF, false, "rh"),
        new Setup(3, 1, SMALL_BUFF, true, "rh"),
        new Setup(4, 1, SMALL_BUFF, true, "rh"),
        new Setup(8, 1, SMALL_BUFF, true, "rh"),
        // allGather by recursive doubling likewise
        new Setup(2, 1, SMALL_BUFF, false, "rd"),
        new Setup(3, 1, SMALL_BUFF, true, "rd"),
        new Setup(4, 1, SMALL_BUFF, true, "rd"),
        new Setup(8, 1, SMALL_BUFF, true, "rd"));
  }

  /**
   * A per-rank count spanning many slots and several rounds of allGather/reduceScatter pieces (4
   * slots each) on every channel of the setup: at least 20_001 elements and at least 128 KiB per
   * channel (a channel is only used from 128 KiB on) or two slots, whichever is more. Odd, so it
   * divides by neither the ranks nor the channels.
   */
  static int bigCount(Setup s, DataType t) {
    long bytes =
        Math.max(
            s.channels() * ChannelSplit.MIN_BYTES_PER_CHANNEL,
            2L * s.buffSize() / FifoLayout.STEPS);
    long count = bytes / t.size() + 13;
    return (int) Math.max(20_001, count | 1);
  }

  /** The cases of one setup, every collective x dtype x op x count x root x placement. */
  static List<Spec> cases(Setup s) {
    int n = s.ranks();
    List<Spec> out = new ArrayList<>();
    int[] roots = n == 1 ? new int[] {0} : new int[] {0, n - 1};
    int alternate = 0;
    for (Kind kind : Kind.values()) {
      if (kind == Kind.ALL_REDUCE) {
        continue; // AllReduceTest's
      }
      List<Object[]> pairs =
          !kind.reduces()
              ? Reference.DTYPES_ONLY
              : s.reduced() ? Reference.REDUCED_PAIRS : Reference.ALL_PAIRS;
      for (Object[] p : pairs) {
        DataType t = (DataType) p[0];
        ReduceOp op = (ReduceOp) p[1];
        int[] counts =
            s.reduced()
                ? new int[] {1, 1003, bigCount(s, t)}
                : new int[] {0, 1, 7, 1003, bigCount(s, t)};
        for (int count : counts) {
          for (int root : kind.rooted() ? roots : new int[] {0}) {
            // the reduced set alternates in-place and out-of-place instead of running both
            boolean[] placements =
                s.reduced() ? new boolean[] {alternate++ % 2 == 0} : new boolean[] {false, true};
            for (boolean inPlace : placements) {
              out.add(new Spec(kind, t, op, count, root, inPlace));
            }
          }
        }
      }
    }
    return out;
  }

  /**
   * Runs one case on every rank of {@code comms} (launched asynchronously from this thread, in rank
   * order), checks every rank and compares the results every rank holds alike (allReduce,
   * broadcast, allGather) byte for byte across ranks.
   *
   * @return null when everything matches, otherwise what is wrong
   * @throws AssertionError when a rank fails or does not finish in time (the communicators are
   *     closed then)
   */
  static String runAndCheck(Communicator[] comms, Spec spec, long seed) {
    int n = comms.length;
    ByteBuffer[] inputs = spec.inputs(n, seed);
    CollectiveCase[] parts = new CollectiveCase[n];
    try {
      for (int r = 0; r < n; r++) {
        parts[r] = CollectiveCase.prepare(comms[r].device(), spec, r, n, inputs, seed);
      }
      List<CompletableFuture<Void>> futures = new ArrayList<>();
      for (int r = 0; r < n; r++) {
        futures.add(parts[r].launch(comms[r]));
      }
      long end = System.nanoTime() + WAIT.toNanos();
      for (int r = 0; r < n; r++) {
        Throwable e =
            RankHarness.await(
                futures.get(r),
                Duration.ofNanos(Math.max(1, end - System.nanoTime())),
                "rank " + r);
        if (e != null) {
          throw new AssertionError("rank " + r + " failed: " + e, e);
        }
      }
      StringBuilder problems = new StringBuilder();
      for (int r = 0; r < n; r++) {
        String m = parts[r].check(inputs);
        if (m != null) {
          problems.append(' ').append(m);
        }
      }
      ByteBuffer first = parts[0].sharedResult();
      for (int r = 1; r < n && first != null; r++) {
        int at = first.mismatch(parts[r].sharedResult());
        if (at >= 0) {
          problems
              .append(" rank ")
              .append(r)
              .append("'s result differs from rank 0's at byte ")
              .append(at)
              .append(';');
        }
      }
      return problems.length() == 0 ? null : problems.toString();
    } catch (RuntimeException | AssertionError e) {
      // stop every kernel before the buffers are freed
      RankHarness.closeQuietly(comms);
      throw e;
    } finally {
      for (CollectiveCase c : parts) {
        if (c != null) {
          c.close();
        }
      }
    }
  }

  @ParameterizedTest(
      name = "every collective x dtype x op x count x root matches the reference: {0}")
  @MethodSource("setups")
  void everyCollectiveDtypeOpAndCountMatchesTheReference(Setup s) {
    runCases(s.toString(), RankHarness.createAll(s.ranks(), s.config(), WAIT), cases(s), 1);
  }

  /**
   * Runs {@code specs} one after the other on {@code comms} ({@link #runAndCheck}, seeds from
   * {@code seed} on), then closes the communicators; fails naming {@code setup} and every wrong
   * case (a failed or stalled collective ends the run at once).
   */
  static void runCases(String setup, Communicator[] comms, List<Spec> specs, long seed) {
    List<String> wrong = new ArrayList<>();
    int done = 0;
    try {
      for (Spec spec : specs) {
        String m;
        try {
          m = runAndCheck(comms, spec, seed++);
        } catch (AssertionError e) {
          throw new AssertionError(
              setup
                  + ": "
                  + spec
                  + ": "
                  + e.getMessage()
                  + (wrong.isEmpty() ? "" : "\nearlier wrong cases:\n" + list(wrong)),
              e);
        }
        done++;
        if (m != null) {
          wrong.add(setup + ": " + spec + ":" + m);
        }
      }
    } finally {
      if (wrong.isEmpty()) {
        RankHarness.closeAll(comms, WAIT);
      } else {
        RankHarness.closeQuietly(comms);
      }
    }
    if (!wrong.isEmpty()) {
      fail(wrong.size() + " of " + done + " cases wrong:\n" + list(wrong));
    }
    assertTrue(done > 0, "no case ran");
  }

  /** The first 30 entries, one a line. */
  private static String list(List<String> wrong) {
    return String.join("\n", wrong.subList(0, Math.min(30, wrong.size())))
        + (wrong.size() > 30 ? "\n... and " + (wrong.size() - 30) + " more" : "");
  }

  @Test
  @DisplayName("different collectives issued back to back without waiting all complete correctly")
  void mixedAsyncCollectivesInFlight() {
    int n = 4;
    CclConfig config =
        TestConfig.builder()
            .buffSize(SMALL_BUFF)
            .nChannels(2)
            .timeout(Duration.ofSeconds(30))
            .build();
    Communicator[] comms = RankHarness.createAll(n, config, WAIT);
    // several rounds of: allReduce, broadcast, allGather, reduceScatter, reduce, broadcast
    List<Spec> specs = new ArrayList<>();
    for (int round = 0; round < 3; round++) {
      boolean inPlace = round % 2 == 1;
      specs.add(null); // allReduce, done by hand below
      specs.add(new Spec(Kind.BROADCAST, DataType.INT32, null, 20_011, round % n, inPlace));
      specs.add(new Spec(Kind.ALL_GATHER, DataType.BFLOAT16, null, 70_001 + round, 0, !inPlace));
      specs.add(new Spec(Kind.REDUCE_SCATTER, DataType.FLOAT64, ReduceOp.MAX, 7_001, 0, inPlace));
      specs.add(new Spec(Kind.REDUCE, DataType.UINT8, ReduceOp.PROD, 300_007, n - 1, !inPlace));
      specs.add(new Spec(Kind.BROADCAST, DataType.FLOAT16, null, 1, n - 1 - round % n, true));
      specs.add(new Spec(Kind.REDUCE_SCATTER, DataType.INT64, ReduceOp.SUM, 40_003, 0, !inPlace));
    }
    int count = 30_001;
    DataType f32 = DataType.FLOAT32;
    RankHarness.closingAfter(
        comms,
        WAIT,
        () -> {
          RankHarness.run(
              n,
              WAIT,
              rank -> {
                Communicator comm = comms[rank];
                List<CollectiveCase> parts = new ArrayList<>();
                List<ByteBuffer[]> inputs = new ArrayList<>();
                List<CompletableFuture<Void>> futures = new ArrayList<>();
                List<DeviceBuffer> arBufs = new ArrayList<>();
                List<ByteBuffer[]> arInputs = new ArrayList<>();
                boolean done = false;
                try {
                  for (int k = 0; k < specs.size(); k++) {
                    Spec s = specs.get(k);
                    if (s == null) {
                      ByteBuffer[] in =
                          new Spec(Kind.REDUCE, f32, ReduceOp.SUM, count, 0, false)
                              .inputs(n, 900 + k);
                      DeviceBuffer b = HostDevice.INSTANCE.allocate(count * 4L);
                      b.copyFromHost(in[rank].duplicate().order(ByteOrder.nativeOrder()), 0);
                      arBufs.add(b);
                      arInputs.add(in);
                      futures.add(comm.allReduceAsync(b, b, count, f32, ReduceOp.SUM));
                    } else {
                      ByteBuffer[] in = s.inputs(n, 900 + k);
                      CollectiveCase c = CollectiveCase.prepare(s, rank, n, in, 900 + k);
                      parts.add(c);
                      inputs.add(in);
                      futures.add(c.launch(comm));
                    }
                  }
                  for (int k = 0; k < futures.size(); k++) {
                    Throwable e = RankHarness.await(futures.get(k), WAIT, "call " + k);
                    String call = "rank " + rank + ": call " + k + " (" + what(specs.get(k)) + ")";
                    assertNull(e, call + " failed: " + e);
                  }
                  int ar = 0;
                  int other = 0;
                  for (int k = 0; k < specs.size(); k++) {
                    String m;
                    if (specs.get(k) == null) {
                      ByteBuffer got = Reference.heap(count * 4);
                      arBufs.get(ar).copyToHost(0, got);
                      m =
                          Reference.allReduce(arInputs.get(ar), count, f32, ReduceOp.SUM)
                              .mismatches(got);
                      ar++;
                    } else {
                      m = parts.get(other).check(inputs.get(other));
                      other++;
                    }
                    String call = "rank " + rank + ": call " + k + " (" + what(specs.get(k)) + ")";
                    assertNull(m, call + ": " + m);
                  }
                  done = true;
                } finally {
                  if (!done) {
                    comm.abort();
                    comm.close(); // stop the kernels before the buffers are freed
                  }
                  parts.forEach(CollectiveCase::close);
                  arBufs.forEach(RankHarness::closeBuffer);
                }
              });
        });
  }

  private static String what(Spec s) {
    return s == null ? "allReduce float32 sum in-place" : s.toString();
  }

  private static void expectIae(Executable call, String... words) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call);
    assertNotNull(e.getMessage(), "the exception has no message");
    for (String w : words) {
      assertTrue(
          e.getMessage().contains(w),
          "message \"" + e.getMessage() + "\" should contain \"" + w + "\"");
    }
  }

  @Test
  @DisplayName("bad root, too-small buffers and bad counts are rejected and leave the ranks usable")
  void badArgumentsAreRejected() {
    int n = 3;
    CclConfig config =
        TestConfig.builder()
            .buffSize(SMALL_BUFF)
            .nChannels(2)
            .timeout(Duration.ofSeconds(30))
            .build();
    Communicator[] comms = RankHarness.createAll(n, config, WAIT);
    DeviceBuffer buf = HostDevice.INSTANCE.allocate(400); // 100 float32
    DeviceBuffer big = HostDevice.INSTANCE.allocate(4000);
    boolean ok = false;
    try {
      DataType f32 = DataType.FLOAT32;
      ReduceOp sum = ReduceOp.SUM;
      for (Communicator c : comms) {
        for (int root : new int[] {-1, n, Integer.MAX_VALUE}) {
          expectIae(() -> c.broadcastAsync(buf, big, 10, f32, root), "root");
          expectIae(() -> c.broadcastAsync(buf, 10, f32, root), "root");
          expectIae(() -> c.broadcast(buf, 10, f32, root), "root");
          expectIae(() -> c.reduceAsync(buf, big, 10, f32, sum, root), "root");
          expectIae(() -> c.reduce(buf, buf, 10, f32, sum, root), "root");
        }
        // allGather: recv needs 3 x 40 floats = 480 bytes, the buffer holds 400
        expectIae(() -> c.allGatherAsync(big, buf, 40, f32), "recv", "480", "400");
        expectIae(() -> c.allGatherAsync(buf, buf, 40, f32), "recv", "480", "400");
        expectIae(() -> c.allGatherAsync(buf, big, 101, f32), "send", "404", "400");
        expectIae(() -> c.allGatherAsync(buf, big, -1, f32), "-1");
        expectIae(() -> c.allGatherAsync(buf, big, Long.MAX_VALUE / 2, f32), "overflow");
        expectIae(() -> c.allGatherAsync(null, big, 10, f32), "send", "null");
        expectIae(() -> c.allGatherAsync(buf, null, 10, f32), "recv", "null");
        // reduceScatter: send needs 3 x 40 floats
        expectIae(() -> c.reduceScatterAsync(buf, big, 40, f32, sum), "send", "480", "400");
        expectIae(() -> c.reduceScatterAsync(buf, buf, 40, f32, sum), "480", "400");
        expectIae(() -> c.reduceScatterAsync(big, buf, 101, f32, sum), "recv", "404", "400");
        expectIae(() -> c.reduceScatterAsync(big, big, -1, f32, sum), "-1");
        expectIae(
            () -> c.reduceScatterAsync(big, big, 10, DataType.INT32, ReduceOp.AVG), "avg", "int32");
        // broadcast / reduce: recv too small on every rank, send too small on the root
        expectIae(() -> c.broadcastAsync(big, buf, 101, f32, 0), "recv", "404", "400");
        expectIae(() -> c.broadcastAsync(buf, 101, f32, 1), "404", "400");
        expectIae(() -> c.reduceAsync(big, buf, 101, f32, sum, c.rank()), "recv", "404", "400");
        expectIae(() -> c.reduceAsync(buf, big, 101, f32, sum, 0), "send", "404", "400");
        expectIae(() -> c.reduceAsync(buf, buf, -1, f32, sum, 0), "-1");
        expectIae(() -> c.reduceAsync(big, big, 10, DataType.UINT8, ReduceOp.AVG, 0), "avg");
        expectIae(() -> c.reduceAsync(big, null, 10, f32, sum, c.rank()), "recv", "null");
        assertFalse(c.isAborted(), "a rejected call must not abort rank " + c.rank());
      }
      // the send buffer of the root is checked there
      expectIae(() -> comms[1].broadcastAsync(buf, big, 101, f32, 1), "send", "404", "400");
      expectIae(() -> comms[2].broadcastAsync(null, big, 10, f32, 2), "send", "null");
      // the rejected calls were not counted as collectives: real ones still line up
      assertNull(runAndCheck(comms, new Spec(Kind.ALL_GATHER, f32, null, 1003, 0, false), 3));
      assertNull(
          runAndCheck(comms, new Spec(Kind.REDUCE, DataType.INT32, ReduceOp.MAX, 7, 2, true), 4));
      ok = true;
    } finally {
      RankHarness.closeBuffer(buf);
      RankHarness.closeBuffer(big);
      if (ok) {
        RankHarness.closeAll(comms, WAIT);
      } else {
        RankHarness.closeQuietly(comms);
      }
    }
  }
}
