package org.sparkccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.sparkccl.algorithm.RingAllReduce;
import org.sparkccl.bootstrap.Bootstrap;
import org.sparkccl.bootstrap.LocalBootstrap;
import org.sparkccl.config.CclConfig;
import org.sparkccl.config.Key;
import org.sparkccl.device.DeviceBuffer;
import org.sparkccl.device.HostDevice;
import org.sparkccl.fifo.FifoLayout;

/**
 * allReduce with ranks as threads of this JVM, every data type and operator against an independent
 * reference. One set of communicators per setup; the cases run one after the other on it, so the
 * FIFO step counters keep growing across collectives as in real use.
 */
@DisplayName("allReduce with ranks as threads")
class AllReduceTest {
  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final int SMALL_BUFF = 64 << 10;

  /**
   * One communicator setup; {@code reduced} runs a smaller dtype x op x count set, {@code algo} is
   * the {@code algo} key.
   */
  record Setup(
      int ranks,
      int channels,
      int buffSize,
      int socketThreads,
      int socksPerThread,
      boolean reduced,
      String algo) {
    Setup(
        int ranks,
        int channels,
        int buffSize,
        int socketThreads,
        int socksPerThread,
        boolean reduced) {
      this(ranks, channels, buffSize, socketThreads, socksPerThread, reduced, "auto");
    }

    static Setup doubling(int ranks, boolean reduced) {
      return new Setup(ranks, 1, SMALL_BUFF, 0, 1, reduced, "rd");
    }

    static Setup halving(int ranks, boolean reduced) {
      return new Setup(ranks, 1, SMALL_BUFF, 0, 1, reduced, "rh");
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
        new Setup(1, 1, SMALL_BUFF, 0, 1, false),
        new Setup(2, 1, SMALL_BUFF, 0, 1, false),
        new Setup(3, 2, SMALL_BUFF, 0, 1, false),
        new Setup(4, 4, SMALL_BUFF, 0, 1, false),
        new Setup(2, 2, 4 << 20, 0, 1, true),
        // slots of 128K and 64K: big enough (>= 64K) for the socket helper threads to carry data
        new Setup(3, 2, 1 << 20, 2, 2, true),
        new Setup(4, 2, 512 << 10, 1, 3, true),
        new Setup(8, 2, SMALL_BUFF, 0, 1, true),
        // recursive doubling forced at every rank count up to 9: powers of two, and the others
        // with 1, 2, 3 and 1 ranks folded into the core
        Setup.doubling(1, true),
        Setup.doubling(2, false),
        Setup.doubling(3, false),
        Setup.doubling(4, true),
        Setup.doubling(5, true),
        Setup.doubling(6, true),
        Setup.doubling(7, true),
        Setup.doubling(8, true),
        Setup.doubling(9, true),
        // steps of 128 KiB and 512 KiB: over sockets, slices from 16 KiB leave from the buffers
        // themselves (a folded rank at 3, whole exchanges at 8)
        new Setup(3, 1, 1 << 20, 0, 1, true, "rd"),
        new Setup(8, 1, 4 << 20, 0, 1, true, "rd"),
        new Setup(4, 1, 1 << 20, 0, 1, true, "rh"),
        // Rabenseifner forced at the same rank counts: halves of odd and tiny counts (1 element on
        // any count, 7 on 4 ranks, leave some ranks empty blocks) and the same folds; the full
        // dtype x op set at 2, 3 and 4 ranks
        Setup.halving(1, true),
        Setup.halving(2, false),
        Setup.halving(3, false),
        Setup.halving(4, false),
        Setup.halving(5, true),
        Setup.halving(6, true),
        Setup.halving(7, true),
        Setup.halving(8, true),
        Setup.halving(9, true));
  }

  /**
   * A count that covers at least two full ring rounds on every channel the setup has: a round of a
   * channel is {@code ranks} chunks of {@link RingAllReduce#CHUNK_STEPS} slots, and a channel is
   * only used for 128 KiB of data or more. Odd, so it divides by neither the ranks nor the
   * channels.
   */
  static int multiRoundCount(Setup s, DataType t) {
    long chunkElems =
        (long) (s.buffSize() / FifoLayout.STEPS / t.size()) * RingAllReduce.CHUNK_STEPS;
    long perChannel = Math.max(2L * Math.max(2, s.ranks()) * chunkElems, (128 << 10) / t.size());
    long count = s.channels() * perChannel + 13;
    // default 4M buffers would need hundreds of MiB for two rounds: a few channels' worth is enough
    return (int) Math.min(count, (4L << 20) / t.size() + 13);
  }

  @ParameterizedTest(name = "every dtype x op x count matches the reference: {0}")
  @MethodSource("setups")
  void everyDtypeOpAndCountMatchesTheReference(Setup s) {
    Communicator[] comms = RankHarness.createAll(s.ranks(), s.config(), WAIT);
    List<String> wrong = new ArrayList<>();
    int cases = 0;
    try {
      List<Object[]> pairs = s.reduced() ? Reference.REDUCED_PAIRS : Reference.ALL_PAIRS;
      long seed = 1;
      for (Object[] p : pairs) {
        DataType t = (DataType) p[0];
        ReduceOp op = (ReduceOp) p[1];
        int[] counts =
            s.reduced()
                ? new int[] {1, 1003, multiRoundCount(s, t)}
                : new int[] {0, 1, 7, 1003, multiRoundCount(s, t)};
        for (int count : counts) {
          // the reduced set alternates in-place and out-of-place instead of running both
          boolean[] placements =
              s.reduced() ? new boolean[] {seed % 2 == 0} : new boolean[] {false, true};
          for (boolean inPlace : placements) {
            String name =
                s
                    + ": "
                    + t
                    + " "
                    + op
                    + " count="
                    + count
                    + (inPlace ? " in-place" : " out-of-place");
            String m;
            try {
              m = RankHarness.allReduceAndCheck(comms, count, t, op, inPlace, seed++, WAIT);
            } catch (AssertionError e) {
              throw new AssertionError(name + ": " + e.getMessage(), e);
            }
            cases++;
            if (m != null) {
              wrong.add(name + ":" + m);
            }
          }
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
      fail(wrong.size() + " of " + cases + " cases wrong:\n" + String.join("\n", wrong));
    }
    assertTrue(cases > 0, "no case ran");
  }

  @ParameterizedTest(name = "{0} ranks")
  @ValueSource(ints = {2, 5, 8})
  @DisplayName(
      "recursive doubling leaves the same bits on every rank, also where NaNs of different payloads"
          + " meet (the operand order decides which survives)")
  void doublingIsBitIdenticalAcrossRanks(int n) {
    bitIdenticalAcrossRanks(Setup.doubling(n, true));
  }

  @ParameterizedTest(name = "{0} ranks")
  @ValueSource(ints = {4, 6, 8})
  @DisplayName(
      "Rabenseifner leaves the same bits on every rank where NaNs meet, though its halving rounds"
          + " skip the NaN pass (one rank reduces each half; the others get copies)")
  void halvingIsBitIdenticalAcrossRanks(int n) {
    bitIdenticalAcrossRanks(Setup.halving(n, true));
  }

  private static void bitIdenticalAcrossRanks(Setup setup) {
    int n = setup.ranks();
    Communicator[] comms = RankHarness.createAll(n, setup.config(), WAIT);
    RankHarness.closingAfter(
        comms,
        WAIT,
        () -> {
          for (DataType t : new DataType[] {DataType.FLOAT32, DataType.FLOAT64}) {
            for (ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.PROD, ReduceOp.AVG}) {
              bitIdentical(comms, t, op, 3001 + n);
            }
          }
        });
  }

  /** Random values, and at every 7th element a NaN whose payload names the rank. */
  private static void bitIdentical(Communicator[] comms, DataType t, ReduceOp op, int count) {
    int n = comms.length;
    int bytes = count * t.size();
    SplittableRandom rnd = new SplittableRandom(count * 31L + op.ordinal());
    DeviceBuffer[] bufs = new DeviceBuffer[n];
    try {
      List<CompletableFuture<Void>> futures = new ArrayList<>();
      for (int r = 0; r < n; r++) {
        ByteBuffer in = Reference.heap(bytes);
        for (int i = 0; i < count; i++) {
          boolean nan = i % 7 == 0;
          if (t == DataType.FLOAT32) {
            in.putFloat(
                i * 4,
                nan ? Float.intBitsToFloat(0x7fc00000 | (r + 1)) : (float) rnd.nextDouble(-2, 2));
          } else {
            in.putDouble(
                i * 8,
                nan
                    ? Double.longBitsToDouble(0x7ff8000000000000L | (r + 1))
                    : rnd.nextDouble(-2, 2));
          }
        }
        bufs[r] = comms[r].device().allocate(bytes);
        bufs[r].copyFromHost(in, 0);
      }
      for (int r = 0; r < n; r++) {
        futures.add(comms[r].allReduceAsync(bufs[r], bufs[r], count, t, op));
      }
      ByteBuffer first = null;
      for (int r = 0; r < n; r++) {
        Throwable e = RankHarness.await(futures.get(r), WAIT, "rank " + r);
        assertEquals(null, e, "rank " + r + " failed");
        ByteBuffer got = Reference.heap(bytes);
        bufs[r].copyToHost(0, got);
        if (first == null) {
          first = got;
        } else {
          int at = got.mismatch(first);
          assertEquals(-1, at, t + " " + op + ": rank " + r + " differs from rank 0 at byte " + at);
        }
      }
    } finally {
      for (DeviceBuffer b : bufs) {
        RankHarness.closeBuffer(b);
      }
    }
  }

  @Test
  @DisplayName("ranks calling the blocking allReduce from their own threads get the reference")
  void blockingAllReduceOnRankThreads() {
    int n = 3;
    CclConfig config =
        TestConfig.builder()
            .buffSize(SMALL_BUFF)
            .nChannels(2)
            .timeout(Duration.ofSeconds(30))
            .build();
    LocalBootstrap.Group group = LocalBootstrap.group(n);
    // every rank connected before any starts sending: early senders have their own test below
    CyclicBarrier connected = new CyclicBarrier(n);
    Object[][] cases = {
      {DataType.FLOAT32, ReduceOp.SUM, 100_003},
      {DataType.INT32, ReduceOp.MAX, 70_001},
      {DataType.BFLOAT16, ReduceOp.AVG, 9_999},
      {DataType.UINT64, ReduceOp.PROD, 20_011},
      {DataType.FLOAT16, ReduceOp.MIN, 1},
    };
    RankHarness.run(
        n,
        WAIT,
        rank -> {
          try (Communicator comm = Communicator.create(group.rank(rank), config)) {
            connected.await(30, TimeUnit.SECONDS);
            for (int k = 0; k < cases.length; k++) {
              DataType t = (DataType) cases[k][0];
              ReduceOp op = (ReduceOp) cases[k][1];
              int count = (int) cases[k][2];
              ByteBuffer[] inputs = new ByteBuffer[n];
              for (int r = 0; r < n; r++) {
                inputs[r] = Reference.heap(count * t.size());
                Reference.fill(
                    inputs[r], count, t, new SplittableRandom(1000L * k + r), op == ReduceOp.PROD);
              }
              String m = RankHarness.allReduceInPlaceOnRank(comm, rank, inputs, count, t, op);
              assertEquals(
                  null, m, "rank " + rank + ": " + t + " " + op + " count=" + count + ": " + m);
            }
          }
        });
  }

  /**
   * A blocking call runs its kernel on the calling thread only when nothing is queued before it
   * (CollectiveLauncher.launch); behind asynchronous calls it must still take its turn. Each rank
   * starts asynchronous allReduces, then blocking ones, then waits for the first: every result
   * against the reference, whichever thread ran it. Shapes repeat, so that trees and doubling reuse
   * a plan whose last collective has completed, and build another while it is in flight. {@code
   * ring2}: the ring on two channels, whose blocking calls run channel 0's task on the calling
   * thread and channel 1's on its kernel thread (the larger counts take both channels).
   */
  @ParameterizedTest(name = "algo={0}")
  @ValueSource(strings = {"ring", "rd", "tree", "ring2"})
  @DisplayName("blocking calls behind asynchronous ones keep the call order")
  void blockingCallsBehindAsyncOnesKeepOrder(String algo) {
    int n = 3;
    int async = 4;
    int blocking = 3;
    DataType t = DataType.FLOAT64;
    boolean twoChannels = algo.equals("ring2");
    CclConfig config =
        TestConfig.builder()
            .buffSize(SMALL_BUFF)
            .timeout(Duration.ofSeconds(30))
            .set(Key.ALGO, twoChannels ? "ring" : algo)
            .nChannels(twoChannels ? 2 : 1)
            .build();
    LocalBootstrap.Group group = LocalBootstrap.group(n);
    int[] counts = {1, 7, 40_009, 7, 40_009, 7, 1};
    ByteBuffer[][] inputs = new ByteBuffer[counts.length][n];
    for (int k = 0; k < counts.length; k++) {
      for (int r = 0; r < n; r++) {
        inputs[k][r] = Reference.heap(counts[k] * t.size());
        Reference.fill(inputs[k][r], counts[k], t, new SplittableRandom(77L * k + r), false);
      }
    }
    RankHarness.run(
        n,
        WAIT,
        rank -> {
          try (Communicator comm = Communicator.create(group.rank(rank), config)) {
            DeviceBuffer[] bufs = new DeviceBuffer[counts.length];
            try {
              List<CompletableFuture<Void>> pending = new ArrayList<>();
              for (int k = 0; k < async + blocking; k++) {
                bufs[k] = HostDevice.INSTANCE.allocate((long) counts[k] * t.size());
                bufs[k].copyFromHost(inputs[k][rank].duplicate().order(ByteOrder.nativeOrder()), 0);
                if (k < async) {
                  pending.add(comm.allReduceAsync(bufs[k], bufs[k], counts[k], t, ReduceOp.SUM));
                } else {
                  comm.allReduce(bufs[k], bufs[k], counts[k], t, ReduceOp.SUM);
                }
              }
              for (CompletableFuture<Void> f : pending) {
                f.get(30, TimeUnit.SECONDS);
              }
              for (int k = 0; k < async + blocking; k++) {
                ByteBuffer got = Reference.heap(counts[k] * t.size());
                bufs[k].copyToHost(0, got);
                String m =
                    Reference.allReduce(inputs[k], counts[k], t, ReduceOp.SUM).mismatches(got);
                assertEquals(null, m, "rank " + rank + ", call " + k + ": " + m);
              }
            } finally {
              for (DeviceBuffer b : bufs) {
                RankHarness.closeBuffer(b);
              }
            }
          }
        });
  }

  /** A bootstrap whose allGather returns late on one rank, so that rank connects last. */
  private record LateBootstrap(Bootstrap inner, int lateRank, long delayMillis)
      implements Bootstrap {
    @Override
    public int rank() {
      return inner.rank();
    }

    @Override
    public int nRanks() {
      return inner.nRanks();
    }

    @Override
    public byte[][] allGather(byte[] mine, Duration timeout) {
      byte[][] all = inner.allGather(mine, timeout);
      if (inner.rank() == lateRank) {
        try {
          Thread.sleep(delayMillis);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return all;
    }

    @Override
    public String localHost() {
      return inner.localHost();
    }
  }

  @Test
  @DisplayName(
      "a rank that accepts its connections late still works when its peer already sends data")
  void rankThatConnectsLateWhilePeersAlreadySend() {
    int n = 3;
    int count = 4099;
    DataType t = DataType.FLOAT32;
    for (int[] setup : new int[][] {{1, 0, 1}, {2, 0, 1}, {2, 2, 2}}) {
      CclConfig config =
          TestConfig.builder()
              .buffSize(SMALL_BUFF)
              .nChannels(setup[0])
              .socketThreads(setup[1])
              .socketsPerThread(setup[2])
              .timeout(Duration.ofSeconds(20))
              .build();
      LocalBootstrap.Group group = LocalBootstrap.group(n);
      ByteBuffer[] inputs = new ByteBuffer[n];
      for (int r = 0; r < n; r++) {
        inputs[r] = Reference.heap(count * 4);
        Reference.fill(inputs[r], count, t, new SplittableRandom(500 + r), false);
      }
      Reference.Expected expected = Reference.allReduce(inputs, count, t, ReduceOp.SUM);
      Throwable[] errors =
          RankHarness.runCollect(
              n,
              WAIT,
              rank -> {
                // rank 2 starts accepting 300 ms after rank 1 has connected to it and started
                // the buffer is declared first so that it is freed after the communicator closed
                try (DeviceBuffer buf = HostDevice.INSTANCE.allocate(count * 4L);
                    Communicator comm =
                        Communicator.create(new LateBootstrap(group.rank(rank), 2, 300), config)) {
                  buf.copyFromHost(inputs[rank].duplicate().order(ByteOrder.nativeOrder()), 0);
                  comm.allReduce(buf, buf, count, t, ReduceOp.SUM);
                  ByteBuffer got = Reference.heap(count * 4);
                  buf.copyToHost(0, got);
                  String m = expected.mismatches(got);
                  assertEquals(null, m, "rank " + rank + ": " + m);
                }
              });
      RankHarness.assertNoErrors(errors, config.toString());
    }
  }

  /**
   * Twelve allReduces of one shape in flight, sum and max alternating: trees, doubling and
   * Rabenseifner reuse a plan only once its last collective has completed, so most of these build
   * their own while the reused ones change their operation.
   */
  @ParameterizedTest(name = "algo={0}")
  @ValueSource(strings = {"auto", "rd", "rh", "tree"})
  @DisplayName("several allReduces in flight at once complete in order with the right results")
  void manyAsyncCollectivesInFlight(String algo) {
    int n = 3;
    int inFlight = 12;
    int count = 30_001;
    DataType t = DataType.FLOAT32;
    CclConfig config =
        TestConfig.builder()
            .buffSize(SMALL_BUFF)
            .nChannels(2)
            .timeout(Duration.ofSeconds(30))
            .set(Key.ALGO, algo)
            .build();
    Communicator[] comms = RankHarness.createAll(n, config, WAIT);
    DeviceBuffer[][] bufs = new DeviceBuffer[inFlight][n];
    ByteBuffer[][] inputs = new ByteBuffer[inFlight][n];
    boolean ok = false;
    try {
      List<List<CompletableFuture<Void>>> futures = new ArrayList<>();
      for (int k = 0; k < inFlight; k++) {
        ReduceOp op = k % 2 == 0 ? ReduceOp.SUM : ReduceOp.MAX;
        List<CompletableFuture<Void>> perRank = new ArrayList<>();
        for (int r = 0; r < n; r++) {
          inputs[k][r] = Reference.heap(count * 4);
          Reference.fill(inputs[k][r], count, t, new SplittableRandom(31L * k + r), false);
          bufs[k][r] = HostDevice.INSTANCE.allocate(count * 4L);
          bufs[k][r].copyFromHost(inputs[k][r].duplicate().order(ByteOrder.nativeOrder()), 0);
        }
        for (int r = 0; r < n; r++) {
          perRank.add(comms[r].allReduceAsync(bufs[k][r], bufs[k][r], count, t, op));
        }
        futures.add(perRank);
      }
      for (int k = 0; k < inFlight; k++) {
        ReduceOp op = k % 2 == 0 ? ReduceOp.SUM : ReduceOp.MAX;
        Reference.Expected expected = Reference.allReduce(inputs[k], count, t, op);
        for (int r = 0; r < n; r++) {
          Throwable e = RankHarness.await(futures.get(k).get(r), WAIT, "collective " + k);
          assertEquals(null, e, "collective " + k + " on rank " + r + " failed: " + e);
          ByteBuffer got = Reference.heap(count * 4);
          bufs[k][r].copyToHost(0, got);
          String m = expected.mismatches(got);
          assertEquals(null, m, "collective " + k + " (" + op + ") on rank " + r + ": " + m);
        }
      }
      ok = true;
    } finally {
      if (ok) {
        RankHarness.closeAll(comms, WAIT);
      } else {
        RankHarness.closeQuietly(comms);
      }
      for (DeviceBuffer[] row : bufs) {
        for (DeviceBuffer b : row) {
          RankHarness.closeBuffer(b);
        }
      }
    }
  }
}
